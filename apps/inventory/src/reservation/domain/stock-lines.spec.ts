import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { InventoryError } from './inventory.errors';
import { normalizeLines } from './stock-lines';

describe('normalizeLines', () => {
  it('sorts lines by SKU, so every transaction locks stock rows in the same order', () => {
    assert.deepEqual(
      normalizeLines([
        { sku: 'B', quantity: 1 },
        { sku: 'A', quantity: 2 },
        { sku: 'a', quantity: 3 },
      ]),
      [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 1 },
        { sku: 'a', quantity: 3 },
      ],
    );
  });

  it('merges two lines of the same SKU into one', () => {
    assert.deepEqual(
      normalizeLines([
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 1 },
        { sku: 'A', quantity: 5 },
      ]),
      [
        { sku: 'A', quantity: 7 },
        { sku: 'B', quantity: 1 },
      ],
    );
  });

  it('refuses more than 1000 units of one SKU after merging, with a stable code', () => {
    assert.throws(
      () =>
        normalizeLines([
          { sku: 'A', quantity: 600 },
          { sku: 'A', quantity: 401 },
        ]),
      (e: unknown) => e instanceof InventoryError && e.code === 'INVENTORY.LINE_TOO_LARGE',
    );
  });
});
