import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { waitFor } from '@checkout/testing';
import { ErrorBody, OrderView, SagaEvents, SagaScenario, expectBody, uniqueCustomer } from '../src';

const forward = (o: OrderView) => o.history.map((h) => h.to).filter((s) => s !== 'AWAITING_PAYMENT');

/** Waits until inventory shows the SKU's counters (some compensations emit no event of their own). */
const stockBecomes = (
  s: SagaScenario,
  sku: string,
  want: { available: number; reserved: number; sold: number },
) =>
  waitFor(
    `stock of ${sku} to be ${JSON.stringify(want)}`,
    async () => {
      const st = await s.api.stock(sku);
      return st.available === want.available && st.reserved === want.reserved && st.sold === want.sold && st;
    },
    { timeoutMs: 60_000 },
  );

/** Checks what every paid-and-shipped path has in common: one charge of the total, one shipment, a confirmation. */
async function expectShipped(s: SagaScenario, orderId: string, sku: string) {
  const order = await s.settle(orderId, 'SHIPPED');
  assert.deepEqual(forward(order), ['PENDING', 'PAID', 'SHIPPED'], `history of ${orderId}`);
  assert.equal(order.paymentState, 'succeeded');
  const ledger = await s.ledger(orderId);
  assert.equal(ledger.raw.charges.length, 1, `order ${orderId}: exactly one charge request reached the PSP`);
  assert.equal(ledger.succeeded, 1);
  assert.equal(ledger.refunds, 0);
  assert.equal(ledger.charged, order.total);
  const [payment, ...others] = await s.api.payments(orderId);
  assert.equal(others.length, 0, 'one payment attempt');
  assert.equal(payment.state, 'succeeded');
  assert.equal(payment.pspReference, ledger.raw.charges[0].id);
  assert.equal(payment.history.filter((h) => h.to === 'failed').length, 0, 'the payment never failed');
  const shipments = await s.api.shipments(orderId);
  assert.deepEqual(
    shipments.map((x) => ({ status: x.status, lines: x.lines })),
    [{ status: 'created', lines: [{ sku, quantity: 1 }] }],
  );
  await s.notificationsSent(orderId, ['order_confirmation']);
  await s.expectEvents(orderId, 'fulfillment.shipment-created', {
    exactly: {
      'order.created': 1,
      'inventory.reserved': 1,
      'payment.succeeded': 1,
      'inventory.committed': 1,
      'order.paid': 1,
      'fulfillment.shipment-created': 1,
    },
    never: [
      'order.cancelled',
      'payment.failed',
      'payment.refunded',
      'inventory.released',
      'inventory.rejected',
      'fulfillment.shipment-failed',
    ],
  });
  const [paid] = s.events.ofType(orderId, 'order.paid');
  assert.equal(paid.payload.total, order.total);
  assert.equal(paid.payload.paymentId, payment.paymentId);
  assert.equal(paid.payload.pspReference, payment.pspReference);
  assert.deepEqual(paid.payload.lines, order.lines);
  return { order, payment, ledger };
}

describe('checkout saga paths, end to end through the HTTP APIs and Kafka', () => {
  let events: SagaEvents;

  beforeAll(async () => {
    events = await new SagaEvents().start();
  });

  afterAll(async () => {
    await events?.stop();
  });

  it.concurrent(
    'happy path: SHIPPED, one charge of the total, the unit sold, a confirmation sent',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-HAPPY', 3);
      const orderId = await s.place(s.body(sku, 'tok_success'));
      const { order } = await expectShipped(s, orderId, sku);
      assert.equal(order.total, 50_000);
      assert.deepEqual(await stockBecomes(s, sku, { available: 2, reserved: 0, sold: 1 }), {
        sku,
        available: 2,
        reserved: 0,
        sold: 1,
        reservationTtlSeconds: null,
      });
      await s.expectConserved();
    },
  );

  it.concurrent(
    'out of stock at reservation: REJECTED, no charge, the flash-sale gate gets its token back',
    async () => {
      const s = new SagaScenario(events);
      // Inventory has nothing, the gate believes it has one unit: the gate admits, inventory rejects.
      const sku = await s.sku('E2E-REJECT', 0);
      const gate = await s.api.setFlashSale(sku, true, 1);
      assert.deepEqual({ enabled: gate.enabled, available: gate.available }, { enabled: true, available: 1 });

      const rejected = await s.place(s.body(sku, 'tok_success'));
      const order = await s.settle(rejected, 'REJECTED');
      assert.equal(order.paymentState, null);
      await s.expectEvents(rejected, 'inventory.rejected', {
        exactly: { 'order.created': 1, 'inventory.rejected': 1 },
        never: ['inventory.reserved', 'payment.succeeded', 'payment.failed', 'order.paid', 'order.cancelled'],
      });
      const [why] = s.events.ofType(rejected, 'inventory.rejected');
      assert.deepEqual(
        { reason: why.payload.reason, shortSkus: why.payload.shortSkus },
        {
          reason: 'insufficient_stock',
          shortSkus: [sku],
        },
      );
      assert.deepEqual(await s.api.payments(rejected), [], 'payment never heard of the order');
      const ledger = await s.ledger(rejected);
      assert.equal(ledger.raw.charges.length, 0, 'no charge');
      assert.deepEqual(await s.api.notifications(rejected), []);

      // The rejection gave the gate's unit back: with one unit restocked, the next buyer is admitted and served,
      // and the one after is turned away by the gate (the unit is now held, then sold).
      await s.restock(sku, 1);
      const admitted = await s.place(s.body(sku, 'tok_success'));
      const refused = await s.api.checkout(s.body(sku, 'tok_success'));
      const error = expectBody('checkout past the gate', refused, 409, ErrorBody);
      assert.equal(error.error, 'OUT_OF_STOCK');
      await expectShipped(s, admitted, sku);
      assert.deepEqual(await stockBecomes(s, sku, { available: 0, reserved: 0, sold: 1 }), {
        sku,
        available: 0,
        reserved: 0,
        sold: 1,
        reservationTtlSeconds: null,
      });
      await s.api.setFlashSale(sku, false);
      await s.expectConserved();
    },
  );

  it.concurrent(
    'payment declined: CANCELLED, stock released, the voucher redemption given back',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-DECLINE', 2);
      const code = `E2E-${randomBytes(5).toString('hex').toUpperCase()}`;
      await s.api.createVoucher(code, 10, 1);

      const declined = await s.place(s.body(sku, 'tok_decline', { voucherCode: code }));
      const order = await s.settle(declined, 'CANCELLED');
      assert.equal(order.paymentState, 'failed');
      assert.equal(order.voucherCode, code);
      await s.expectEvents(declined, 'inventory.released', {
        exactly: {
          'order.created': 1,
          'inventory.reserved': 1,
          'payment.failed': 1,
          'order.cancelled': 1,
          'inventory.released': 1,
        },
        never: ['payment.succeeded', 'inventory.committed', 'order.paid', 'payment.refunded'],
      });
      const [cancelled] = s.events.ofType(declined, 'order.cancelled');
      assert.deepEqual(cancelled.payload, {
        orderId: declined,
        reason: 'payment_failed',
        refundIfCharged: false,
      });
      const [released] = s.events.ofType(declined, 'inventory.released');
      assert.deepEqual(released.payload.lines, [{ sku, quantity: 1 }]);
      assert.deepEqual(await stockBecomes(s, sku, { available: 2, reserved: 0, sold: 0 }), {
        sku,
        available: 2,
        reserved: 0,
        sold: 0,
        reservationTtlSeconds: null,
      });
      const ledger = await s.ledger(declined);
      assert.deepEqual(
        { succeeded: ledger.succeeded, failed: ledger.failed, refunds: ledger.refunds },
        {
          succeeded: 0,
          failed: 1,
          refunds: 0,
        },
      );
      const [payment] = await s.api.payments(declined);
      assert.equal(payment.state, 'failed');
      await s.notificationsSent(declined, ['payment_failed']);

      // The voucher has one redemption: it came back, so the next checkout may use it, and then it is gone.
      const reused = await s.place(s.body(sku, 'tok_success', { voucherCode: code }));
      const exhausted = await s.api.checkout(s.body(sku, 'tok_success', { voucherCode: code }));
      assert.equal(
        expectBody('third use of a one-use voucher', exhausted, 409, ErrorBody).error,
        'VOUCHER_EXHAUSTED',
      );
      const { order: paid } = await expectShipped(s, reused, sku);
      assert.deepEqual(
        { total: paid.total, discount: paid.discount, voucherCode: paid.voucherCode },
        {
          total: 45_000,
          discount: 5_000,
          voucherCode: code,
        },
      );
      await s.expectConserved();
    },
  );

  it.concurrent(
    'PSP timeout, then success (tok_timeout_success): SHIPPED, never CANCELLED, exactly one charge',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-TIMEOUT', 2);
      const orderId = await s.place(s.body(sku, 'tok_timeout_success'));
      const { order, payment } = await expectShipped(s, orderId, sku);
      assert.ok(!order.history.some((h) => h.to === 'CANCELLED'), 'the order was never cancelled');
      assert.ok(
        payment.history.some((h) => h.to === 'unknown'),
        `the timeout made the payment unknown, not failed: ${JSON.stringify(payment.history)}`,
      );
      assert.ok(payment.chargeRequests >= 1);
      await stockBecomes(s, sku, { available: 1, reserved: 0, sold: 1 });
      await s.expectConserved();
    },
  );

  it.concurrent(
    'webhook lost (tok_webhook_lost): reconciliation finds the charge and the order ships',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-LOST', 2);
      const orderId = await s.place(s.body(sku, 'tok_webhook_lost'));
      const { payment, ledger } = await expectShipped(s, orderId, sku);
      assert.deepEqual(ledger.raw.deliveries, [], 'the PSP never sent a webhook');
      const success = payment.history.find((h) => h.to === 'succeeded');
      assert.equal(success?.source, 'reconciliation', JSON.stringify(payment.history));
      const [succeeded] = s.events.ofType(orderId, 'payment.succeeded');
      assert.equal(succeeded.payload.source, 'reconciliation');
      await stockBecomes(s, sku, { available: 1, reserved: 0, sold: 1 });
      await s.expectConserved();
    },
  );

  it.concurrent(
    'duplicate webhook (tok_webhook_duplicate): three deliveries of one event, one success, one charge',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-DUP', 2);
      const orderId = await s.place(s.body(sku, 'tok_webhook_duplicate'));
      await s.settle(orderId, 'SHIPPED');
      const ledger = await waitFor(
        `three webhook deliveries of ${orderId}`,
        async () => {
          const l = await s.api.ledger(orderId);
          return l.deliveries.filter((d) => d.status !== null).length >= 3 && l;
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(ledger.events.length, 1);
      assert.deepEqual(
        ledger.deliveries.map((d) => ({ eventId: d.eventId, ok: d.status !== null && d.status < 300 })),
        Array.from({ length: 3 }, () => ({ eventId: ledger.events[0].id, ok: true })),
      );
      const { payment } = await expectShipped(s, orderId, sku);
      assert.equal(
        payment.history.filter((h) => h.to === 'succeeded').length,
        1,
        'one transition to succeeded',
      );
      await s.expectConserved();
    },
  );

  it.concurrent(
    'out-of-order webhook (tok_out_of_order): the stale failure after the success changes nothing',
    async () => {
      const s = new SagaScenario(events);
      const sku = await s.sku('E2E-OOO', 2);
      const orderId = await s.place(s.body(sku, 'tok_out_of_order'));
      const ledger = await waitFor(
        `the stale charge.failed webhook of ${orderId} delivered`,
        async () => {
          const l = await s.api.ledger(orderId);
          return l.deliveries.some((d) => d.type === 'charge.failed' && d.status !== null) && l;
        },
        { timeoutMs: 60_000 },
      );
      assert.deepEqual(
        ledger.events.map((e) => e.type),
        ['charge.succeeded', 'charge.failed'],
      );
      const { payment } = await expectShipped(s, orderId, sku);
      assert.ok(!payment.history.some((h) => h.to === 'failed'), JSON.stringify(payment.history));
      await s.expectConserved();
    },
  );

  it.concurrent(
    'customer cancels while the payment is unknown, then the PSP says succeeded: refunded, not lost',
    async () => {
      const s = new SagaScenario(events);
      let sku = '';
      let orderId = '';
      // The window is the PSP's: between the timeout (unknown) and its webhook or reconciliation (succeeded).
      // A cancel that came too late on a loaded machine is an ordinary paid order; the setup starts again.
      for (let attempt = 1; ; attempt += 1) {
        sku = await s.sku('E2E-CANCEL', 2);
        orderId = await s.place(s.body(sku, 'tok_timeout_success'));
        // Reached, not still in: on a loaded machine the webhook can end the window between two looks, and the
        // late cancel below then starts the setup again instead of this wait running out.
        await waitFor(
          `payment of ${orderId} to be unknown (the PSP timed out)`,
          async () =>
            (await s.api.payments(orderId)).some(
              (p) => p.state === 'unknown' || p.history.some((h) => h.to === 'unknown'),
            ),
          { timeoutMs: 60_000, intervalMs: 50 },
        );
        const cancel = await s.api.cancel(orderId);
        if (cancel.status === 202) {
          assert.deepEqual(cancel.json, { orderId, status: 'CANCELLED' });
          break;
        }
        assert.equal(expectBody('late cancel', cancel, 409, ErrorBody).error, 'ORDER_NOT_CANCELLABLE');
        assert.ok(
          attempt < 3,
          `the payment of ${orderId} succeeded before the cancel, ${attempt} times in a row`,
        );
        console.info(`attempt ${attempt}: ${orderId} was paid before the cancel arrived; starting again`);
        await s.settle(orderId, 'SHIPPED');
      }

      const order = await s.settle(orderId, 'REFUNDED');
      assert.deepEqual(
        order.history.map((h) => h.to).filter((t) => t !== 'AWAITING_PAYMENT'),
        ['PENDING', 'CANCELLED', 'REFUNDED'],
      );
      assert.equal(order.paymentState, 'refunded');
      const ledger = await s.ledger(orderId);
      assert.deepEqual(
        { succeeded: ledger.succeeded, refunds: ledger.refunds },
        { succeeded: 1, refunds: 1 },
      );
      assert.equal(ledger.refunded, ledger.charged);
      assert.equal(ledger.charged, order.total);
      const [payment] = await s.api.payments(orderId);
      assert.equal(payment.state, 'refunded');
      assert.equal(payment.refund?.state, 'succeeded');
      assert.equal(payment.refund?.pspRefundId, ledger.raw.refunds[0].id);
      await s.expectEvents(orderId, 'payment.refunded', {
        exactly: {
          'order.created': 1,
          'order.cancelled': 1,
          'inventory.released': 1,
          'payment.succeeded': 1,
          'payment.refunded': 1,
        },
        never: ['inventory.committed', 'order.paid', 'fulfillment.shipment-created', 'payment.failed'],
      });
      const [cancelled] = s.events.ofType(orderId, 'order.cancelled');
      assert.deepEqual(cancelled.payload, { orderId, reason: 'customer_request', refundIfCharged: true });
      assert.deepEqual(await stockBecomes(s, sku, { available: 2, reserved: 0, sold: 0 }), {
        sku,
        available: 2,
        reserved: 0,
        sold: 0,
        reservationTtlSeconds: null,
      });
      assert.deepEqual(await s.api.shipments(orderId), []);
      assert.deepEqual(await s.api.notifications(orderId), []);
      await s.expectConserved();
    },
  );

  for (const [flag, make] of [
    [
      'SKU',
      (s: SagaScenario) => s.sku('UNSHIPPABLE-E2E', 2).then((sku) => ({ sku, customer: uniqueCustomer() })),
    ],
    [
      'customer',
      (s: SagaScenario) =>
        s.sku('E2E-SHIPFAIL', 2).then((sku) => ({ sku, customer: uniqueCustomer('undeliverable') })),
    ],
  ] as const) {
    it.concurrent(
      `shipment fails (carrier refuses the ${flag}): REFUNDED, the unit back to available`,
      async () => {
        const s = new SagaScenario(events);
        const { sku, customer } = await make(s);
        const orderId = await s.place(s.body(sku, 'tok_success', { customerId: customer }));
        const order = await s.settle(orderId, 'REFUNDED');
        assert.deepEqual(forward(order), ['PENDING', 'PAID', 'REFUNDED']);
        assert.equal(order.paymentState, 'refunded');
        await s.expectEvents(orderId, 'payment.refunded', {
          exactly: {
            'order.created': 1,
            'inventory.reserved': 1,
            'payment.succeeded': 1,
            'inventory.committed': 1,
            'order.paid': 1,
            'fulfillment.shipment-failed': 1,
            'payment.refunded': 1,
          },
          never: ['fulfillment.shipment-created', 'order.cancelled', 'payment.failed'],
        });
        const [failed] = s.events.ofType(orderId, 'fulfillment.shipment-failed');
        assert.deepEqual(failed.payload.lines, [{ sku, quantity: 1 }]);
        const [refunded] = s.events.ofType(orderId, 'payment.refunded');
        assert.equal(refunded.payload.amount, order.total);
        const ledger = await s.ledger(orderId);
        assert.deepEqual(
          { succeeded: ledger.succeeded, refunds: ledger.refunds },
          { succeeded: 1, refunds: 1 },
        );
        assert.equal(ledger.refunded, ledger.charged);
        assert.equal(refunded.payload.pspRefundId, ledger.raw.refunds[0].id);
        const shipments = await s.api.shipments(orderId);
        assert.equal(shipments.length, 1);
        assert.equal(shipments[0].status, 'failed');
        assert.ok(shipments[0].failureReason, 'the carrier said why');
        await stockBecomes(s, sku, { available: 2, reserved: 0, sold: 0 });
        await s.notificationsSent(orderId, ['order_confirmation']);
        await s.expectConserved();
      },
    );
  }
});
