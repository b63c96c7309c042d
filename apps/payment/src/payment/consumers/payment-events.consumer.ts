import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { BatchEventHandler, HandlerMap, NonRetryableError, lockSaga, lockSagas } from '@checkout/messaging';
import { PspCredentialRegistry, TenantRegistry } from '@checkout/service-kit';
import { RequestRefundHandler } from '../commands/refund-payment/refund-payment.handler';
import { MovePaymentHandler, storeCause } from '../commands/move-payment/move-payment.handler';
import { findPaymentByOrder } from '../database/payment.repository';

const tenantOf = (tenants: TenantRegistry, event: SagaEvent) => {
  const tenant = tenants.get(event.tenantId);
  if (!tenant) throw new NonRetryableError('PAYMENT.UNKNOWN_TENANT', `unknown tenant ${event.tenantId}`);
  return tenant;
};

/**
 * The events payment reacts to one at a time, each in the consumer's inbox transaction and under its order's
 * lock (lockSaga: inventory.reserved of the same order may be applied by the other consumer group at the same
 * instant): the failure events request a refund, order.cancelled records the cancellation, closes an attempt
 * not yet sent to the PSP and has a charge that may exist refunded. inventory.reserved is consumed in batches
 * (recordAttempts).
 */
export function paymentEventHandlers(
  tenants: TenantRegistry,
  refunds: RequestRefundHandler,
  move: MovePaymentHandler,
): HandlerMap {
  const refund = (reason: string) => async (event: SagaEvent, tx: EntityManager) => {
    tenantOf(tenants, event);
    const payload = event.payload as { orderId: string };
    await lockSaga(tx, event.tenantId, payload.orderId);
    await refunds.execute(tx, {
      tenantId: event.tenantId,
      orderId: payload.orderId,
      reason,
      cause: storeCause(event),
    });
  };
  return {
    'inventory.unavailable-after-payment': refund('inventory_unavailable_after_payment'),
    'fulfillment.shipment-failed': refund('shipment_failed'),
    'order.cancelled': async (event, tx) => {
      tenantOf(tenants, event);
      await lockSaga(tx, event.tenantId, event.payload.orderId);
      await tx.query(
        `INSERT INTO order_cancellation (tenant_id, order_id, reason) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [event.tenantId, event.payload.orderId, event.payload.reason],
      );
      const attempt = await findPaymentByOrder(tx, event.tenantId, event.payload.orderId);
      // Not sent to the PSP yet (the charge worker moves it to pending first): it never will be.
      if (attempt?.state === 'created')
        await move.execute(tx, {
          paymentId: attempt.id,
          tenantId: attempt.tenant_id,
          to: 'failed',
          source: 'charge',
          failureReason: 'order_cancelled',
          detail: `order cancelled (${event.payload.reason}) before the charge`,
        });
      if (event.payload.refundIfCharged) await refund(`order_cancelled_${event.payload.reason}`)(event, tx);
    },
  };
}

/**
 * inventory.reserved -> a new payment attempt (`created`, with its history row); the charge worker calls the PSP
 * after commit. One attempt per order, and none for an order already cancelled (events of two topics may cross;
 * the caller holds the order's lock, so a cancellation is either committed and seen here or waits for this).
 * Consumed in batches (recordAttempts): many events, one transaction.
 */
export const recordAttempt =
  (tenants: TenantRegistry, accounts: PspCredentialRegistry) =>
  async (event: SagaEvent<'inventory.reserved'>, tx: EntityManager): Promise<void> => {
    const tenant = tenantOf(tenants, event);
    // The public account id is stored, never its secret key (the PSP client looks that up per call).
    const account = accounts.forTenant(tenant.id);
    if (!account)
      throw new NonRetryableError(
        'PAYMENT.NO_PSP_ACCOUNT',
        `tenant ${tenant.id} has no PSP account configured`,
      );
    const p = event.payload;
    const id = randomUUID();
    // One attempt per order, and none for an order already cancelled (events of two topics may cross).
    const created: unknown[] = await tx.query(
      `INSERT INTO payment_attempt (id, tenant_id, order_id, amount, currency, payment_token, psp_account, idempotency_key, cause)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
          WHERE NOT EXISTS (SELECT 1 FROM order_cancellation WHERE tenant_id = $2 AND order_id = $3)
         ON CONFLICT DO NOTHING RETURNING 1`,
      [
        id,
        tenant.id,
        p.orderId,
        p.amount,
        p.currency,
        p.paymentToken,
        account.accountId,
        `pay_${id}`,
        JSON.stringify(storeCause(event)),
      ],
    );
    if (created.length === 1) {
      await tx.query(
        `INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source, detail)
           VALUES ($1, $2, 'none', 'created', 'charge', 'inventory reserved')`,
        [id, tenant.id],
      );
    }
  };

/** Runs one event's work inside a context (the host continues each event's trace). */
export type EventScope = <R>(event: SagaEvent, fn: () => Promise<R>) => Promise<R>;

/**
 * inventory.reserved, a chunk at a time in one transaction (AttemptsConsumerHost): every order of the chunk is
 * locked first (in lockSagas' stable order, so two chunks never deadlock), then recordAttempt for each event.
 */
export const recordAttempts =
  (
    tenants: TenantRegistry,
    accounts: PspCredentialRegistry,
    scope: EventScope = (_event, fn) => fn(),
  ): BatchEventHandler<'inventory.reserved'> =>
  async (events, tx) => {
    const record = recordAttempt(tenants, accounts);
    await lockSagas(
      tx,
      events.map((e) => ({ tenantId: e.tenantId, orderId: e.payload.orderId })),
    );
    for (const event of events) await scope(event, () => record(event, tx));
  };
