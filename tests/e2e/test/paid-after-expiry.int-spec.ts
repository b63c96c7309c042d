import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { waitFor } from '@checkout/testing';
import { CheckoutAccepted, ErrorBody, SAGA_TIMEOUT_MS, SagaEvents, SagaScenario, expectBody } from '../src';

/**
 * A holds the last unit; its charge cannot reach the PSP (scripted 503s for A alone) until its reservation has
 * expired and B holds the unit. Then the PSP recovers and A's payment succeeds for a unit that is gone.
 * A's order id is only known from the 202, and its saga may reach the PSP before that: so the fault is first
 * scripted for the amount of A's charge (a price no other spec uses), then for A's order id, and the amount's fault
 * is cleared before B (same price) is placed. The faults run on globex so that the charge breaker they trip is not
 * the one every other spec uses.
 */
async function paidAfterTheUnitWasResold(
  s: SagaScenario,
  opts: { allowBackorder: boolean },
): Promise<{ sku: string; late: string; winner: string; unitPrice: number }> {
  // Each case its own range, away from the round prices other specs use.
  const unitPrice = (opts.allowBackorder ? 50_000 : 40_000) + randomInt(1, 10_000);
  const sku = await s.sku(opts.allowBackorder ? 'E2E-BACKORDER' : 'E2E-EXPIRED', 1, {
    unitPrice,
    allowBackorder: opts.allowBackorder,
    reservationTtlSeconds: 1,
  });
  await s.api.addPspFault({ amount: unitPrice }, 'charge', 1000);
  let late: string | undefined;
  try {
    late = await s.place(s.body(sku, 'tok_success'));
    await s.api.addPspFault(late, 'charge', 1000);
    await s.api.clearPspFaults({ amount: unitPrice });
    const payment = await waitFor(
      `A's first charge (${late}) answered`,
      async () => (await s.api.payments(late!)).find((p) => p.lastError !== null || p.state === 'succeeded'),
      { timeoutMs: SAGA_TIMEOUT_MS },
    );
    assert.deepEqual((await s.ledger(late)).raw.charges, [], 'the PSP has charged nothing for A yet');
    assert.ok(['pending', 'unknown'].includes(payment.state), `A's payment is open, not ${payment.state}`);
    const expired = await s.events.waitFor(late, 'inventory.released');
    assert.equal(expired.payload.reason, 'expired');
    // B gets the service's default TTL, so its hold outlives whatever A's recovery takes.
    await s.api.setStock(sku, { available: 1, reservationTtlSeconds: null });
    const winner = await s.place(s.body(sku, 'tok_success'));
    await s.events.waitFor(winner, 'inventory.reserved');
    await s.api.clearPspFaults(late);
    await s.settle(winner, 'SHIPPED');
    return { sku, late, winner, unitPrice };
  } finally {
    await s.api.clearPspFaults({ amount: unitPrice });
    if (late) await s.api.clearPspFaults(late);
  }
}

describe('payment succeeds after the reservation expired and the unit went to someone else', () => {
  let events: SagaEvents;

  beforeAll(async () => {
    events = await new SagaEvents().start();
  });

  afterAll(async () => {
    await events?.stop();
  });

  it.concurrent(
    'no backorder: REFUNDED, an apology with a voucher code, and that code buys once',
    async () => {
      const s = new SagaScenario(events, 'globex');
      const { sku, late, unitPrice } = await paidAfterTheUnitWasResold(s, { allowBackorder: false });

      const order = await s.settle(late, 'REFUNDED');
      assert.deepEqual(
        order.history.map((h) => h.to),
        ['PENDING', 'AWAITING_PAYMENT', 'REFUNDED'],
      );
      assert.equal(order.paymentState, 'refunded');
      await s.expectEvents(late, 'payment.refunded', {
        exactly: {
          'order.created': 1,
          'inventory.reserved': 1,
          'inventory.released': 1,
          'payment.succeeded': 1,
          'inventory.unavailable-after-payment': 1,
          'payment.refunded': 1,
          'fulfillment.apology-voucher-issued': 1,
        },
        never: ['inventory.committed', 'inventory.backordered', 'order.paid', 'fulfillment.shipment-created'],
      });
      const [unavailable] = s.events.ofType(late, 'inventory.unavailable-after-payment');
      assert.deepEqual(unavailable.payload.shortSkus, [sku]);
      const ledger = await s.ledger(late);
      assert.deepEqual(
        { charges: ledger.raw.charges.length, succeeded: ledger.succeeded, refunds: ledger.refunds },
        { charges: 1, succeeded: 1, refunds: 1 },
      );
      assert.equal(ledger.refunded, ledger.charged);
      assert.equal(ledger.charged, order.total);

      const [apology] = await s.notificationsSent(late, ['out_of_stock_apology']);
      assert.match(apology.voucherCode ?? '', /^SORRY-[A-Z0-9]{10}$/);
      assert.ok(apology.body.includes(apology.voucherCode!), 'the email carries the code');
      assert.equal(apology.customerId, order.customerId);
      assert.deepEqual(await s.api.shipments(late), []);
      assert.deepEqual(
        await s.api.stock(sku),
        { sku, available: 0, reserved: 0, sold: 1, reservationTtlSeconds: null },
        'the unit is the winner’s',
      );

      // The emailed code is a real voucher for that customer: one checkout with it is accepted, the next is not.
      const [issued] = s.events.ofType(late, 'fulfillment.apology-voucher-issued');
      assert.deepEqual(
        {
          code: issued.payload.code,
          customerId: issued.payload.customerId,
          notification: issued.payload.notificationId,
        },
        { code: apology.voucherCode, customerId: order.customerId, notification: apology.notificationId },
      );
      await s.restock(sku, 1);
      const withCode = s.body(sku, 'tok_success', {
        customerId: order.customerId,
        voucherCode: issued.payload.code,
      });
      const redeemed = await waitFor(
        `the order service to accept apology voucher ${issued.payload.code}`,
        async () => {
          const r = await s.api.checkout(withCode);
          // Until the order service has consumed the issued event the code is unknown, and nothing is created.
          return r.status === 404 && (r.json as { error?: string }).error === 'UNKNOWN_VOUCHER'
            ? undefined
            : r;
        },
        { timeoutMs: SAGA_TIMEOUT_MS },
      );
      const { orderId: comeback } = expectBody(
        'checkout with the apology code',
        redeemed,
        202,
        CheckoutAccepted,
      );
      s.orders.push(comeback);
      const again = await s.api.checkout(withCode);
      assert.equal(
        expectBody('second use of the apology code', again, 409, ErrorBody).error,
        'VOUCHER_EXHAUSTED',
      );
      const served = await s.settle(comeback, 'SHIPPED');
      const discount = Math.floor((unitPrice * issued.payload.percentOff) / 100); // rounded down, as the order does
      assert.deepEqual(
        { voucherCode: served.voucherCode, discount: served.discount, total: served.total },
        { voucherCode: issued.payload.code, discount, total: unitPrice - discount },
      );
      assert.equal((await s.ledger(comeback)).charged, served.total);
      await s.expectConserved();
    },
  );

  it.concurrent('backorder allowed: BACKORDERED, the charge kept, nothing refunded', async () => {
    const s = new SagaScenario(events, 'globex');
    const { sku, late } = await paidAfterTheUnitWasResold(s, { allowBackorder: true });

    const order = await s.settle(late, 'BACKORDERED');
    assert.deepEqual(
      order.history.map((h) => h.to),
      ['PENDING', 'AWAITING_PAYMENT', 'BACKORDERED'],
    );
    assert.equal(order.paymentState, 'succeeded');
    await s.expectEvents(late, 'inventory.backordered', {
      exactly: {
        'order.created': 1,
        'inventory.reserved': 1,
        'inventory.released': 1,
        'payment.succeeded': 1,
        'inventory.backordered': 1,
      },
      never: ['inventory.committed', 'inventory.unavailable-after-payment', 'payment.refunded', 'order.paid'],
    });
    const [backordered] = s.events.ofType(late, 'inventory.backordered');
    assert.deepEqual(backordered.payload.lines, [{ sku, quantity: 1 }]);
    const ledger = await s.ledger(late);
    assert.deepEqual(
      { charges: ledger.raw.charges.length, succeeded: ledger.succeeded, refunds: ledger.refunds },
      { charges: 1, succeeded: 1, refunds: 0 },
    );
    assert.equal(ledger.charged, order.total);
    assert.deepEqual(await s.api.stock(sku), {
      sku,
      available: 0,
      reserved: 0,
      sold: 1,
      reservationTtlSeconds: null,
    });
    // Fulfillment emails nothing for a backorder: it ships nothing yet and has nothing to apologise for.
    assert.deepEqual(await s.api.notifications(late), []);
    await s.expectConserved();

    // The merchant restocks: the backorder is filled oldest first, the order is paid and ships.
    await s.restock(sku, 1, { allowBackorder: true });
    const shipped = await s.settle(late, 'SHIPPED');
    assert.deepEqual(
      shipped.history.map((h) => h.to),
      ['PENDING', 'AWAITING_PAYMENT', 'BACKORDERED', 'PAID', 'SHIPPED'],
    );
    await s.expectEvents(late, 'fulfillment.shipment-created', {
      exactly: { 'inventory.backordered': 1, 'inventory.committed': 1, 'order.paid': 1 },
      never: ['payment.refunded'],
    });
    const filled = await s.api.stock(sku);
    assert.deepEqual(
      { available: filled.available, reserved: filled.reserved, sold: filled.sold },
      {
        available: 0,
        reserved: 0,
        sold: 2,
      },
    );
    assert.equal((await s.ledger(late)).refunds, 0);
    await s.expectConserved();
  });
});
