import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { MAX_ORDER_TOTAL, MAX_UNIT_PRICE, applyVoucher, priceLines } from './pricing';
import { CurrencyMismatch, OrderTotalTooLarge, PriceChanged, UnknownSku, ZeroTotal } from './checkout.errors';

const prices = [
  { sku: 'A', unitPrice: 50_000, currency: 'VND' },
  { sku: 'B', unitPrice: 1_999, currency: 'VND' },
  { sku: 'U', unitPrice: 10, currency: 'USD' },
];

describe('pricing at checkout', () => {
  it('prices every line from the price list and snapshots the totals', () => {
    const order = priceLines(
      'VND',
      [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 3, unitPrice: 1_999 },
      ],
      prices,
    );
    assert.deepEqual(order.lines, [
      { sku: 'A', quantity: 2, unitPrice: 50_000, discount: 0, lineTotal: 100_000 },
      { sku: 'B', quantity: 3, unitPrice: 1_999, discount: 0, lineTotal: 5_997 },
    ]);
    assert.equal(order.subtotal, 105_997);
    assert.equal(order.total, 105_997);
  });

  it('answers PRICE_CHANGED with the current prices when the shopper saw another price', () => {
    assert.throws(
      () =>
        priceLines(
          'VND',
          [
            { sku: 'A', quantity: 1, unitPrice: 45_000 },
            { sku: 'B', quantity: 1 },
          ],
          prices,
        ),
      (e: unknown) =>
        e instanceof PriceChanged &&
        JSON.stringify(e.details.changed) ===
          JSON.stringify([{ sku: 'A', quoted: 45_000, unitPrice: 50_000 }]) &&
        (e.details.currentPrices as unknown[]).length === 2,
    );
  });

  it('names unknown SKUs and refuses a currency other than the price list', () => {
    assert.throws(
      () =>
        priceLines(
          'VND',
          [
            { sku: 'A', quantity: 1 },
            { sku: 'Z', quantity: 1 },
          ],
          prices,
        ),
      (e: unknown) => e instanceof UnknownSku && e.skus.join() === 'Z',
    );
    assert.throws(() => priceLines('VND', [{ sku: 'U', quantity: 1 }], prices), CurrencyMismatch);
  });

  it('applies a voucher per line, rounding down, so the discount never exceeds the percentage', () => {
    const order = applyVoucher(
      [
        { sku: 'B', quantity: 1, unitPrice: 1_999, discount: 0, lineTotal: 1_999 },
        { sku: 'A', quantity: 1, unitPrice: 50_000, discount: 0, lineTotal: 50_000 },
      ],
      10,
    );
    assert.deepEqual(
      order.lines.map((l) => [l.discount, l.lineTotal]),
      [
        [199, 1_800],
        [5_000, 45_000],
      ],
    );
    assert.equal(order.discount, 5_199);
    assert.equal(order.total, order.subtotal - order.discount);
  });
});

describe('pricing: exact integers within bounds', () => {
  it('computes totals near the bound exactly (no float rounding)', () => {
    const unitPrice = 999_999_999_999; // just under MAX_UNIT_PRICE
    const order = priceLines(
      'VND',
      [{ sku: 'H', quantity: 1000 }],
      [{ sku: 'H', unitPrice, currency: 'VND' }],
      7,
    );
    const gross = BigInt(unitPrice) * 1000n;
    const discount = (gross * 7n) / 100n;
    assert.equal(BigInt(order.subtotal), gross);
    assert.equal(BigInt(order.discount), discount);
    assert.equal(BigInt(order.total), gross - discount);
    assert.ok(Number.isSafeInteger(order.total));
  });

  it('refuses an order whose total exceeds MAX_ORDER_TOTAL (a 422, never a 500)', () => {
    const huge = [{ sku: 'H', unitPrice: Number.MAX_SAFE_INTEGER, currency: 'VND' }];
    assert.throws(
      () => priceLines('VND', [{ sku: 'H', quantity: 1000 }], huge),
      (e: unknown) => e instanceof OrderTotalTooLarge && e.status === 422,
    );
    const many = Array.from({ length: 100 }, (_, i) => ({
      sku: `S${i}`,
      unitPrice: MAX_UNIT_PRICE,
      currency: 'VND',
    }));
    assert.throws(
      () =>
        priceLines(
          'VND',
          many.map((p) => ({ sku: p.sku, quantity: 1000 })),
          many,
        ),
      OrderTotalTooLarge,
    );
    assert.ok(MAX_ORDER_TOTAL < Number.MAX_SAFE_INTEGER);
  });

  it('refuses a zero-total order (a 100% voucher): nothing could ever pay it', () => {
    assert.throws(
      () => priceLines('VND', [{ sku: 'A', quantity: 1 }], prices, 100),
      (e: unknown) => e instanceof ZeroTotal && e.status === 422,
    );
  });
});
