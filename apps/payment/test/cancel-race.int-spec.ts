import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { InboxContext, OutboxWriter } from '@checkout/messaging';
import { DEV_PSP_CREDENTIALS, PspCredentialRegistry } from '@checkout/service-kit';
import { barrier, sagaEvent, serviceDataSource, waitFor } from '@checkout/testing';
import { MovePaymentHandler } from '../src/payment/commands/move-payment/move-payment.handler';
import { RequestRefundHandler } from '../src/payment/commands/request-refund/request-refund.handler';
import { ChargePaymentsJob } from '../src/payment/jobs/charge-payments.job';
import { CancelPaymentHandler } from '../src/payment/commands/cancel-payment/cancel-payment.handler';
import { RecordAttemptsHandler } from '../src/payment/commands/record-attempts/record-attempts.handler';
import { PaymentEventsConsumer } from '../src/payment/consumers/payment-events.consumer';
import { PaymentMetrics } from '../src/payment/payment.metrics';

const ROUNDS = 24;
/** Orders per round: one inventory.reserved chunk of this many events against one order.cancelled each. */
const chunkOf = (round: number) => (round % 3 === 0 ? 1 : 4);

const reserved = (orderId: string) =>
  sagaEvent('inventory.reserved', 'acme', orderId, {
    orderId,
    lines: [{ sku: 'SKU-RACE', quantity: 1 }],
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
    customerId: 'c-race',
    amount: 10_000,
    currency: 'VND',
    paymentToken: 'tok_success',
  });

const cancelled = (orderId: string) =>
  sagaEvent('order.cancelled', 'acme', orderId, {
    orderId,
    reason: 'customer_request',
    refundIfCharged: true,
  });

describe('payment: inventory.reserved and order.cancelled of one order at the same instant', () => {
  let ds: DataSource;
  const move = new MovePaymentHandler(
    new OutboxWriter('payment'),
    new PaymentMetrics(new Registry()),
    new PinoLogger({ pinoHttp: { level: 'silent' } }),
  );
  const consumer = new PaymentEventsConsumer(
    new RecordAttemptsHandler(
      new PspCredentialRegistry(DEV_PSP_CREDENTIALS),
      // No charge worker runs here: the spec reads the attempts the consumer recorded.
      { wake: () => undefined } as unknown as ChargePaymentsJob,
    ),
    new RequestRefundHandler(),
    new CancelPaymentHandler(move, new RequestRefundHandler()),
  );
  /** The context the transport gives a consumer method, on the spec's own transaction. */
  const contextOf = (tx: EntityManager, topic: string) =>
    new InboxContext(tx, topic, 0, [], (_event, fn) => fn());

  beforeAll(async () => {
    ds = await serviceDataSource('payment_svc', 8);
  });

  afterAll(async () => {
    await ds.destroy();
  });

  it('never leaves a cancelled order charged: every race ends uncharged or refunded', async () => {
    const orders: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const ids = Array.from({ length: chunkOf(round) }, () => randomUUID());
      orders.push(...ids);
      // Every transaction has begun before any of them runs its reaction: the two consumers' worst case.
      const go = barrier(ids.length + 1);
      const inTx = (fn: (tx: EntityManager) => Promise<void>) =>
        ds.transaction(async (tx) => {
          await tx.query('SELECT 1');
          await go();
          return fn(tx);
        });
      await Promise.all([
        inTx((tx) => consumer.inventoryReserved(ids.map(reserved), contextOf(tx, 'inventory.reserved'))),
        ...ids.map((id) =>
          inTx((tx) => consumer.orderCancelled(cancelled(id), contextOf(tx, 'order.cancelled'))),
        ),
      ]);
    }

    // The running service's charge worker gets every attempt these races left; wait until none is open.
    await waitFor(
      'every attempt of the raced orders settled',
      async () => {
        const [{ open }] = await ds.query(
          `SELECT count(*)::int AS open FROM payment_attempt
            WHERE order_id = ANY($1::uuid[]) AND state IN ('created', 'pending', 'unknown')`,
          [orders],
        );
        return open === 0 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const charged: { order_id: string }[] = await ds.query(
      `SELECT a.order_id FROM payment_attempt a
        WHERE a.order_id = ANY($1::uuid[]) AND a.state = 'succeeded'
          AND NOT EXISTS (SELECT 1 FROM refund r WHERE r.payment_id = a.id)`,
      [orders],
    );
    const [{ cancellations }] = await ds.query(
      `SELECT count(*)::int AS cancellations FROM order_cancellation WHERE order_id = ANY($1::uuid[])`,
      [orders],
    );
    assert.equal(cancellations, orders.length);
    assert.deepEqual(
      charged.map((r) => r.order_id),
      [],
      `${charged.length} of ${orders.length} cancelled orders charged without a refund`,
    );
  });
});
