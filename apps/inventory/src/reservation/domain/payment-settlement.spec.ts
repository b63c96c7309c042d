import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SettledLine, decidePayment } from './payment-settlement';

const line = (sku: string, result: SettledLine['result'], allowBackorder = false): SettledLine => ({
  sku,
  quantity: 2,
  result,
  allowBackorder,
});

describe('decidePayment (paid after the reservation expired)', () => {
  it('commits when every line was still held', () => {
    assert.deepEqual(decidePayment([line('A', 'committed'), line('B', 'committed')]), {
      kind: 'committed',
      reReserved: false,
    });
  });

  it('commits with reReserved when an expired line could be taken again', () => {
    assert.deepEqual(decidePayment([line('A', 'committed'), line('B', 're_reserved')]), {
      kind: 'committed',
      reReserved: true,
    });
  });

  it('backorders the short lines when every short SKU allows backorder', () => {
    assert.deepEqual(decidePayment([line('A', 'committed'), line('B', 'short', true)]), {
      kind: 'backordered',
      backordered: [{ sku: 'B', quantity: 2 }],
    });
  });

  it('is unavailable (refund) when a short SKU does not allow backorder, naming only those', () => {
    assert.deepEqual(
      decidePayment([line('A', 'short', true), line('B', 'short', false), line('C', 'committed')]),
      {
        kind: 'unavailable',
        shortSkus: ['B'],
      },
    );
  });
});
