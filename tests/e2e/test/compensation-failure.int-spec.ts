import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { startService, stopService } from '@checkout/local-stack';
import { waitFor } from '@checkout/testing';
import { ErrorBody, RefundView, SAGA_TIMEOUT_MS, SagaEvents, SagaScenario, metricValue } from '../src';

/** PAYMENT_REFUND_MAX_ATTEMPTS of the local stack (infra/local/src/services.ts). */
const REFUND_MAX_ATTEMPTS = 4;

/**
 * A paid order whose shipment fails (the carrier refuses `UNSHIPPABLE-*`), so payment must refund it, with the
 * PSP scripted to answer 503 to every refund of that order. The fault is scripted once the order id is known and
 * checked to be in place before the first refund reached the PSP; if the saga outran it, that attempt is an
 * ordinary refunded order and the setup starts again. globex: the refund breaker this trips is not acme's.
 */
async function refundTheOrderThePspRefuses(s: SagaScenario, note: (line: string) => void) {
  for (let attempt = 1; ; attempt += 1) {
    const sku = await s.sku('UNSHIPPABLE-E2E-REFUND', 1);
    const orderId = await s.place(s.body(sku, 'tok_success'));
    await s.api.addPspFault(orderId, 'refund', 10_000);
    if ((await s.api.ledger(orderId)).refunds.length === 0) return { sku, orderId };
    assert.ok(attempt < 3, `the refund of ${orderId} beat its fault ${attempt} times in a row`);
    note(`attempt ${attempt}: ${orderId} was refunded before its fault was scripted; starting again`);
    await s.api.clearPspFaults(orderId);
    await s.settle(orderId, 'REFUNDED');
  }
}

/** Waits until the order's refund is parked as `refund_failed` after `attempts` attempts. */
async function parkedRefund(s: SagaScenario, orderId: string): Promise<RefundView> {
  const refund = await waitFor(
    `the refund of ${orderId} parked as refund_failed`,
    async () => {
      const r = (await s.api.payments(orderId))[0]?.refund;
      return r && r.state !== 'pending' ? r : undefined;
    },
    { timeoutMs: SAGA_TIMEOUT_MS },
  );
  assert.equal(refund.state, 'refund_failed', JSON.stringify(refund));
  return refund;
}

/** The operator's retry, then the refund goes through exactly once and the saga ends REFUNDED. */
async function retryAndExpectRefundedOnce(s: SagaScenario, orderId: string, refundId: string) {
  const retried = await s.api.retryRefund(refundId);
  assert.deepEqual({ state: retried.state, attempts: retried.attempts }, { state: 'pending', attempts: 0 });
  await expectRefundedOnce(s, orderId, refundId);
}

/** The refund went through exactly once (PSP ledger, payment, Kafka) and the saga ended REFUNDED. */
async function expectRefundedOnce(s: SagaScenario, orderId: string, refundId: string) {
  const order = await s.settle(orderId, 'REFUNDED');
  assert.equal(order.paymentState, 'refunded');
  const [payment] = await s.api.payments(orderId);
  assert.equal(payment.state, 'refunded');
  assert.equal(payment.refund?.state, 'succeeded');
  const ledger = await s.ledger(orderId);
  assert.deepEqual({ succeeded: ledger.succeeded, refunds: ledger.refunds }, { succeeded: 1, refunds: 1 });
  assert.equal(ledger.refunded, ledger.charged);
  assert.equal(payment.refund?.pspRefundId, ledger.raw.refunds[0].id);
  const again = await s.api.retryRefundAnswer(refundId);
  assert.equal(again.status, 404, 'a refund that went through is not parked any more');
  assert.equal(ErrorBody.parse(again.json).error, 'REFUND_NOT_PARKED');
  await s.expectEvents(orderId, 'payment.refunded', {
    exactly: { 'fulfillment.shipment-failed': 1, 'payment.refunded': 1 },
    never: ['fulfillment.shipment-created', 'payment.failed'],
  });
}

describe('a compensation that keeps failing is parked visibly, not lost', () => {
  let events: SagaEvents;

  beforeAll(async () => {
    events = await new SagaEvents().start();
  });

  afterAll(async () => {
    await events?.stop();
  });

  it('the PSP refuses a refund: retried, parked as refund_failed (API, metric), an operator retry refunds once', async () => {
    const s = new SagaScenario(events, 'globex');
    const parkedBefore = await metricValue('payment', 'payment_refunds_parked_total');
    const { sku, orderId } = await refundTheOrderThePspRefuses(s, (l) => console.info(l));
    try {
      const refund = await parkedRefund(s, orderId);
      assert.equal(refund.attempts, REFUND_MAX_ATTEMPTS, 'retried up to the limit before parking');
      // The last attempt's reason: the PSP's 503, or the refund breaker those 503s opened.
      assert.match(refund.lastError ?? '', /PSP answered 503|circuit open/, 'the reason is kept');
      assert.equal(refund.reason.length > 0, true);

      // Visible: the operator's queue, the metrics, and an order that is not claimed to be refunded.
      const queue = await s.api.refunds('refund_failed');
      assert.deepEqual(
        queue.filter((r) => r.orderId === orderId).map((r) => r.refundId),
        [refund.refundId],
      );
      assert.ok((await metricValue('payment', 'payment_refunds_parked_total')) >= parkedBefore + 1);
      await waitFor('payment_refunds_failed to count the parked refund', async () =>
        (await metricValue('payment', 'payment_refunds_failed')) >= 1 ? true : undefined,
      );
      const waiting = await s.api.order(orderId);
      assert.equal(waiting.status, 'PAID', 'the money has not been returned yet');
      assert.equal((await s.ledger(orderId)).refunds, 0);
    } finally {
      await s.api.clearPspFaults(orderId);
    }

    await retryAndExpectRefundedOnce(s, orderId, (await s.api.payments(orderId))[0].refund!.refundId);
    assert.deepEqual(await s.api.stock(sku), {
      sku,
      available: 1,
      reserved: 0,
      sold: 0,
      reservationTtlSeconds: null,
    });
    await s.expectConserved();
  });

  // Last in this file, and the simulator is down only while one refund is retried: others share it.
  it('the PSP simulator is stopped during a refund: retried while it is down, refunded exactly once once it is back', async () => {
    const s = new SagaScenario(events, 'globex');
    const { sku, orderId } = await refundTheOrderThePspRefuses(s, (l) => console.info(l));
    const first = await parkedRefund(s, orderId);
    const log = (line: string) => console.info(line);
    try {
      assert.ok(await stopService('psp-simulator', log), 'the simulator was running');
      const retried = await s.api.retryRefund(first.refundId);
      const down = await waitFor(
        `the refund of ${orderId} tried while the PSP is down`,
        async () => {
          const r = (await s.api.payments(orderId))[0]?.refund;
          return r && r.attempts >= 1 && r.updatedAt > retried.updatedAt && r.lastError !== null
            ? r
            : undefined;
        },
        { timeoutMs: SAGA_TIMEOUT_MS },
      );
      assert.doesNotMatch(down.lastError ?? '', /PSP answered 503/, `no answer this time: ${down.lastError}`);
    } finally {
      await startService('psp-simulator', log);
    }
    // Back up: the refund goes on retrying by itself, or waits parked for the operator.
    const settled = await waitFor(
      `the refund of ${orderId} past pending`,
      async () => {
        const r = (await s.api.payments(orderId))[0]?.refund;
        return r && r.state !== 'pending' ? r : undefined;
      },
      { timeoutMs: SAGA_TIMEOUT_MS },
    );
    if (settled.state === 'refund_failed') {
      assert.doesNotMatch(
        settled.lastError ?? '',
        /NO_SUCH_CHARGE/,
        'the PSP still knows the charge it made',
      );
      await retryAndExpectRefundedOnce(s, orderId, first.refundId);
    } else {
      await expectRefundedOnce(s, orderId, first.refundId);
    }
    assert.deepEqual(await s.api.stock(sku), {
      sku,
      available: 1,
      reserved: 0,
      sold: 0,
      reservationTtlSeconds: null,
    });
    await s.expectConserved();
  });
});
