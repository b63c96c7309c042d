import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConservationInput, checkConservation, formatVerdict } from './conservation';

type OrderEntry = ConservationInput['orders'][number];

const charge = (id: string, amount: number, status = 'succeeded') => ({
  id,
  amount,
  currency: 'VND',
  status,
});
const refund = (id: string, chargeId: string, amount: number) => ({
  id,
  charge: chargeId,
  amount,
  currency: 'VND',
  status: 'succeeded',
});
const order = (
  orderId: string,
  status: string,
  total = 50_000,
  extra: Partial<OrderEntry> = {},
): OrderEntry => ({
  orderId,
  order: { orderId, status, total, currency: 'VND', paymentState: null, history: [] },
  payments: [],
  ledger: { charges: [], refunds: [] },
  ...extra,
});
const paid = (orderId: string, status = 'SHIPPED', total = 50_000): OrderEntry =>
  order(orderId, status, total, {
    payments: [{ state: 'succeeded' }],
    ledger: { charges: [charge(`ch_${orderId}`, total)], refunds: [] },
  });

/** The seed's flash sale done right: 3 units, 3 shipped, 1 rejected, 1 refunded. */
const cleanRun = (): ConservationInput => ({
  skus: [{ sku: 'HEADPHONES', initial: 5, stock: { sku: 'HEADPHONES', available: 2, reserved: 0, sold: 3 } }],
  orders: [
    paid('o1'),
    paid('o2'),
    paid('o3'),
    order('o4', 'REJECTED'),
    order('o5', 'REFUNDED', 50_000, {
      payments: [{ state: 'refunded' }],
      ledger: { charges: [charge('ch_o5', 50_000)], refunds: [refund('re_o5', 'ch_o5', 50_000)] },
    }),
  ],
});

describe('conservation checker', () => {
  it('given a clean run, the verdict is clean and the summary gives the headline numbers', () => {
    const verdict = checkConservation(cleanRun());

    assert.equal(verdict.ok, true);
    assert.equal(verdict.clean, true);
    assert.deepEqual(verdict.violations, []);
    assert.deepEqual(verdict.byStatus, { SHIPPED: 3, REJECTED: 1, REFUNDED: 1 });
    assert.deepEqual(verdict.money, [{ currency: 'VND', charged: 200_000, refunded: 50_000, kept: 150_000 }]);
    assert.equal(
      formatVerdict(verdict),
      'conservation OK: 1 SKUs, 5 orders (REFUNDED 1, REJECTED 1, SHIPPED 3), charges 4, refunds 1, 150000 VND kept, stuck 0',
    );
  });

  it("given lost updates (the seed's 499 in stock after 540 sales), stock is not conserved", () => {
    const input = cleanRun();
    input.skus = [{ sku: 'HP', initial: 500, stock: { sku: 'HP', available: 499, reserved: 0, sold: 540 } }];

    const verdict = checkConservation(input);

    assert.equal(verdict.ok, false);
    assert.deepEqual(verdict.violations, [
      {
        kind: 'stock_not_conserved',
        subject: 'HP',
        message: 'HP: initial 500 != available 499 + reserved 0 + sold 540 = 1039',
      },
    ]);
  });

  it('counts returned units when inventory reports them, and flags negative counters and unknown SKUs', () => {
    const input = cleanRun();
    input.skus = [
      { sku: 'A', initial: 10, stock: { sku: 'A', available: 5, reserved: 1, sold: 2, returned: 2 } },
      { sku: 'B', initial: 0, stock: { sku: 'B', available: -1, reserved: 0, sold: 1 } },
      { sku: 'C', initial: 3, stock: null },
    ];

    const kinds = checkConservation(input).violations.map((v) => `${v.kind}:${v.subject}`);

    assert.deepEqual(kinds, ['negative_stock:B', 'missing_sku:C']);
  });

  it('given two successful charges for one order (the PSP-timeout incident), reports a double charge and the money', () => {
    const input = cleanRun();
    input.orders[0].ledger.charges.push(charge('ch_o1_retry', 50_000));
    input.orders[0].payments.push({ state: 'succeeded' });

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => `${v.kind}:${v.subject}`),
      ['double_charge:o1', 'double_charge:o1', 'money_mismatch:o1', 'money_mismatch:VND'],
    );
    assert.match(verdict.violations[0].message, /2 successful charges at the PSP \(ch_o1, ch_o1_retry\)/);
  });

  it('given money kept for a cancelled order, or a refunded order never refunded, reports money mismatches', () => {
    const input = cleanRun();
    input.orders.push(
      order('o6', 'CANCELLED', 50_000, { ledger: { charges: [charge('ch_o6', 50_000)], refunds: [] } }),
    );
    input.orders[4].ledger.refunds = [];

    const messages = checkConservation(input).violations.map((v) => v.message);

    assert.ok(messages.includes('order o5 (REFUNDED): charges - refunds = 50000 VND, expected 0'));
    assert.ok(messages.includes('order o6 (CANCELLED): charges - refunds = 50000 VND, expected 0'));
    assert.ok(messages.includes('VND: charges 250000 - refunds 0 = 250000, paid orders hold 150000'));
  });

  it('ignores declined charges, and flags a charge refunded twice', () => {
    const input = cleanRun();
    input.orders[3].ledger.charges = [charge('ch_declined', 50_000, 'failed')];
    input.orders[4].ledger.refunds.push(refund('re_o5_again', 'ch_o5', 0));

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => `${v.kind}:${v.subject}`),
      ['double_refund:o5'],
    );
  });

  it('reports a saga that has not ended as stuck with its last step, which is not by itself a violation', () => {
    const input = cleanRun();
    input.orders.push(
      order('o7', 'AWAITING_PAYMENT', 50_000, {
        order: {
          orderId: 'o7',
          status: 'AWAITING_PAYMENT',
          total: 50_000,
          currency: 'VND',
          paymentState: 'unknown',
          history: [
            { toStatus: 'PENDING', cause: 'checkout', at: '2026-12-02T12:00:00Z' },
            { toStatus: 'AWAITING_PAYMENT', cause: 'inventory.reserved', at: '2026-12-02T12:00:01Z' },
          ],
        },
      }),
    );

    const verdict = checkConservation(input);

    assert.equal(verdict.ok, true);
    assert.equal(verdict.clean, false);
    assert.deepEqual(verdict.stuck, [
      {
        orderId: 'o7',
        status: 'AWAITING_PAYMENT',
        paymentState: 'unknown',
        lastStep: 'AWAITING_PAYMENT after inventory.reserved',
        since: '2026-12-02T12:00:01Z',
      },
    ]);
    assert.match(
      formatVerdict(verdict),
      /stuck 1; first stuck o7 at AWAITING_PAYMENT after inventory\.reserved since 2026-12-02T12:00:01Z$/,
    );
  });

  it('reports an order the order service does not know, and the summary names the violations', () => {
    const input = cleanRun();
    input.orders.push({ orderId: 'ghost', order: null, payments: [], ledger: { charges: [], refunds: [] } });

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => v.kind),
      ['missing_order'],
    );
    assert.match(
      formatVerdict(verdict),
      /^conservation VIOLATED: .*; 1 violations \(missing_order x1\): order service does not know order ghost$/,
    );
  });
});
