import { afterAll, afterEach, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { InboxTransport, OutboxWriter, consoleLogger } from '@checkout/messaging';
import {
  DEV_PSP_CREDENTIALS,
  PspCredentialRegistry,
  TenantRegistry,
  hashApiKey,
} from '@checkout/service-kit';
import { goldenEvent, goldenFixture, sagaHarness } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { ChargePaymentsJob } from '../src/payment/jobs/charge-payments.job';
import { MovePaymentHandler } from '../src/payment/commands/move-payment/move-payment.handler';
import { RequestRefundHandler } from '../src/payment/commands/request-refund/request-refund.handler';
import { SettleRefundHandler } from '../src/payment/commands/settle-refund/settle-refund.handler';
import { CancelPaymentHandler } from '../src/payment/commands/cancel-payment/cancel-payment.handler';
import { RecordAttemptsHandler } from '../src/payment/commands/record-attempts/record-attempts.handler';
import { PaymentEventsConsumer } from '../src/payment/consumers/payment-events.consumer';
import { PaymentMetrics } from '../src/payment/payment.metrics';

const { tenantId, payload: reserved } = goldenFixture('inventory.reserved');
const succeeded = goldenFixture('payment.succeeded').payload;
const refunded = goldenFixture('payment.refunded').payload;
const outbox = new OutboxWriter('payment');
const metrics = new PaymentMetrics(new Registry());
const logger = new PinoLogger({ pinoHttp: { level: 'silent' } });
const move = new MovePaymentHandler(outbox, metrics, logger);

/** The order's payment attempt. */
const attemptOf = async (ds: DataSource) =>
  (await ds.query(
    `SELECT id, state, amount::int AS amount, currency, payment_token AS "paymentToken", refund_on_success AS "refundOnSuccess"
       FROM payment_attempt WHERE order_id = $1`,
    [reserved.orderId],
  )) as {
    id: string;
    state: string;
    amount: number;
    currency: string;
    paymentToken: string;
    refundOnSuccess: string | null;
  }[];

/** The order's refunds requested, by reason. */
const refundsOf = async (ds: DataSource) =>
  (await ds.query(`SELECT reason, state, amount::int AS amount FROM refund WHERE order_id = $1`, [
    reserved.orderId,
  ])) as { reason: string; state: string; amount: number }[];

/** The charge worker's part: the attempt sent to the PSP (created -> pending), which captured the money. */
const charged = (ds: DataSource) =>
  ds.transaction(async (tx) => {
    const [attempt] = await move.claimNew(tx, 10);
    await move.execute(tx, {
      paymentId: attempt.id,
      tenantId,
      to: 'succeeded',
      source: 'charge',
      pspRef: succeeded.pspReference,
    });
  });

/** The refund worker's part: the PSP refunded the requested refund. */
const refundedByPsp = (ds: DataSource) =>
  ds.transaction(async (tx) => {
    const [refund] = (await tx.query(`SELECT id FROM refund WHERE order_id = $1`, [reserved.orderId])) as {
      id: string;
    }[];
    await new SettleRefundHandler(outbox, move, metrics, logger).succeeded(tx, {
      refundId: refund.id,
      pspRefundId: refunded.pspRefundId,
      source: 'refund',
    });
  });

describe('payment saga reactions: given events, expect the golden events (PaymentEventsConsumer on its inbox)', () => {
  const saga = sagaHarness({
    service: 'payment',
    migrations: MIGRATIONS,
    runtime: (dataSource) =>
      new InboxTransport({
        name: 'payment',
        brokers: ['127.0.0.1:1'],
        dataSource,
        logger: consoleLogger,
        admission: {
          tenants: new TenantRegistry([{ id: tenantId, apiKeySha256: hashApiKey('saga-key') }]),
          codePrefix: 'PAYMENT',
        },
        sagaLocks: true, // as the service runs it
      }).addConsumer(
        new PaymentEventsConsumer(
          new RecordAttemptsHandler(
            new PspCredentialRegistry(DEV_PSP_CREDENTIALS),
            // No charge worker runs here: the specs play its part where they need it.
            { wake: () => undefined } as unknown as ChargePaymentsJob,
          ),
          new RequestRefundHandler(),
          new CancelPaymentHandler(move, new RequestRefundHandler()),
        ),
      ),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(() => saga.cleanUp());
  afterAll(() => saga.stop());

  it('given inventory.reserved, expect no event yet and an attempt for the reserved amount; charged, expect payment.succeeded', async () => {
    const { dataSource } = await saga.givenEvents('inventory.reserved').expectEvents();
    assert.deepEqual(
      (await attemptOf(dataSource)).map(({ state, amount, currency, paymentToken }) => ({
        state,
        amount,
        currency,
        paymentToken,
      })),
      [
        {
          state: 'created',
          amount: reserved.amount,
          currency: reserved.currency,
          paymentToken: reserved.paymentToken,
        },
      ],
    );
    await saga.givenEvents('inventory.reserved').given(charged).expectEvents('payment.succeeded');
  });

  it('given order.cancelled before the charge, expect payment.failed (order_cancelled) and nothing to refund', async () => {
    const { dataSource } = await saga
      .givenEvents(
        'inventory.reserved',
        goldenEvent('order.cancelled', { reason: 'customer_request', refundIfCharged: true }),
      )
      .expectEvents(goldenEvent('payment.failed', { reason: 'order_cancelled' }));
    assert.deepEqual(await refundsOf(dataSource), []);
  });

  it('given order.cancelled while the charge is out (refundIfCharged), expect no event and money arriving later refunded', async () => {
    const { dataSource } = await saga
      .givenEvents('inventory.reserved')
      .given((ds) => ds.transaction((tx) => move.claimNew(tx, 10)))
      .givenEvents(goldenEvent('order.cancelled', { reason: 'customer_request', refundIfCharged: true }))
      .expectEvents();
    assert.deepEqual(
      (await attemptOf(dataSource)).map((a) => [a.state, a.refundOnSuccess]),
      [['pending', 'order_cancelled_customer_request']],
    );
  });

  it('given inventory.unavailable-after-payment, expect a refund requested; refunded by the PSP, expect payment.refunded', async () => {
    const { dataSource } = await saga
      .givenEvents('inventory.reserved')
      .given(charged)
      .givenEvents('inventory.unavailable-after-payment')
      .given(refundedByPsp)
      .expectEvents('payment.succeeded', 'payment.refunded');
    assert.deepEqual(await refundsOf(dataSource), [
      { reason: 'inventory_unavailable_after_payment', state: 'succeeded', amount: refunded.amount },
    ]);
  });

  it('given fulfillment.shipment-failed after the charge, expect no event and one refund requested (the same news twice included)', async () => {
    const failed = goldenEvent('fulfillment.shipment-failed');
    const again = goldenEvent('fulfillment.shipment-failed');
    const { dataSource } = await saga
      .givenEvents('inventory.reserved')
      .given(charged)
      .givenEvents(failed, again)
      .expectEvents('payment.succeeded');
    assert.deepEqual(await refundsOf(dataSource), [
      { reason: 'shipment_failed', state: 'pending', amount: refunded.amount },
    ]);
  });
});
