import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyVoucher, priceLines } from './pricing';
import { CurrencyMismatch, PriceChanged, UnknownSku } from './checkout.errors';

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
