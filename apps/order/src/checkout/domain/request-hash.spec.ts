import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { canonicalJson, requestHash } from './request-hash';

describe('request hash of an Idempotency-Key', () => {
  it('is the same for the same body whatever the key order', () => {
    assert.equal(requestHash({ a: 1, b: [{ y: 2, x: 1 }] }), requestHash({ b: [{ x: 1, y: 2 }], a: 1 }));
    assert.equal(canonicalJson({ b: 1, a: 'x' }), '{"a":"x","b":1}');
  });

  it('differs for a different quantity, SKU or line order', () => {
    const base = {
      lines: [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ],
    };
    assert.notEqual(
      requestHash(base),
      requestHash({
        lines: [
          { sku: 'A', quantity: 2 },
          { sku: 'B', quantity: 1 },
        ],
      }),
    );
    assert.notEqual(
      requestHash(base),
      requestHash({
        lines: [
          { sku: 'B', quantity: 1 },
          { sku: 'A', quantity: 1 },
        ],
      }),
    );
  });
});
