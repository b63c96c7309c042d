import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { HandlerMap, NonRetryableError } from '@checkout/messaging';
import { PspCredentialRegistry, TenantRegistry } from '@checkout/service-kit';
import { RequestRefundHandler } from '../commands/refund-payment/refund-payment.handler';
import { storeCause } from '../commands/move-payment/move-payment.handler';

const tenantOf = (tenants: TenantRegistry, event: SagaEvent) => {
  const tenant = tenants.get(event.tenantId);
  if (!tenant) throw new NonRetryableError('PAYMENT.UNKNOWN_TENANT', `unknown tenant ${event.tenantId}`);
  return tenant;
};

/**
 * The events payment reacts to one at a time, each in the consumer's inbox transaction: the failure events
 * request a refund, order.cancelled records the cancellation. inventory.reserved is consumed in batches
 * (recordAttempt).
 */
export function paymentEventHandlers(tenants: TenantRegistry, refunds: RequestRefundHandler): HandlerMap {
  const refund = (reason: string) => async (event: SagaEvent, tx: EntityManager) => {
    tenantOf(tenants, event);
    const payload = event.payload as { orderId: string };
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
      await tx.query(
        `INSERT INTO order_cancellation (tenant_id, order_id, reason) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [event.tenantId, event.payload.orderId, event.payload.reason],
      );
      if (event.payload.refundIfCharged) await refund(`order_cancelled_${event.payload.reason}`)(event, tx);
    },
  };
}

/**
 * inventory.reserved -> a new payment attempt (`created`, with its history row); the charge worker calls the PSP
 * after commit. One attempt per order, and none for an order already cancelled (events of two topics may cross).
 * Consumed in batches (AttemptsConsumerHost): many events, one transaction.
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
