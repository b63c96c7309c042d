import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { conserves, driftOf, expectedCounters, repairable, visibleStock } from './stock-ledger';

describe('stock ledger rules', () => {
  it('conservation: restocked = available + reserved + sold', () => {
    assert.equal(conserves({ available: 3, reserved: 5, sold: 2, restocked: 10 }), true);
    assert.equal(conserves({ available: 3, reserved: 6, sold: 2, restocked: 10 }), false);
  });

  it('derives every counter from the ledgers', () => {
    assert.deepEqual(expectedCounters({ restocked: 10, held: 5, sold: 2 }), {
      available: 3,
      reserved: 5,
      sold: 2,
      restocked: 10,
    });
  });

  it('finds no drift on a healthy SKU', () => {
    assert.deepEqual(
      driftOf({ available: 3, reserved: 5, sold: 2, restocked: 10 }, { restocked: 10, held: 5, sold: 2 }),
      [],
    );
  });

  it('a stuck reserved counter (units leaked out of available) drifts in reserved and available', () => {
    assert.deepEqual(
      driftOf({ available: 1, reserved: 7, sold: 2, restocked: 10 }, { restocked: 10, held: 5, sold: 2 }),
      ['reserved', 'available'],
    );
  });

  it('a corrupted reserved counter alone also breaks conservation', () => {
    assert.deepEqual(
      driftOf({ available: 3, reserved: 9, sold: 2, restocked: 10 }, { restocked: 10, held: 5, sold: 2 }),
      ['reserved', 'conservation'],
    );
  });

  it('ledgers that would need negative available stock cannot be applied', () => {
    assert.equal(repairable({ restocked: 4, held: 5, sold: 0 }), false);
    assert.equal(repairable({ restocked: 5, held: 5, sold: 0 }), true);
  });

  it('lazy expiry: overdue held units are shown as available, never more than reserved', () => {
    assert.deepEqual(visibleStock({ available: 0, reserved: 5, sold: 1 }, 3), {
      available: 3,
      reserved: 2,
      sold: 1,
    });
    assert.deepEqual(visibleStock({ available: 0, reserved: 2, sold: 1 }, 3), {
      available: 2,
      reserved: 0,
      sold: 1,
    });
  });
});
