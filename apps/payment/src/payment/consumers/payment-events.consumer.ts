import { randomUUID } from 'node:crypto';
import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import {
  InboxContext,
  InboxPatternExtras,
  NonRetryableError,
  lockSaga,
  lockSagas,
} from '@checkout/messaging';
import { PspCredentialRegistry } from '@checkout/service-kit';
import { RequestRefundHandler } from '../commands/request-refund/request-refund.handler';
import { MovePaymentHandler, storeCause } from '../commands/move-payment/move-payment.handler';
import { ChargePaymentsJob } from '../jobs/charge-payments.job';
import { findPaymentByOrder } from '../database/payment.repository';

/**
 * inventory.reserved in chunks (group commit) in a consumer group of its own, `payment-attempts`: a flash sale's
 * burst of reservations does not wait one transaction per event.
 */
const ATTEMPTS: InboxPatternExtras = { batch: true, group: 'attempts' };

/** Payment's reactions to the saga, each under its order's lock (docs/design/payment.md). */
@Controller()
export class PaymentEventsConsumer {
  constructor(
    private readonly accounts: PspCredentialRegistry,
    private readonly refunds: RequestRefundHandler,
    private readonly move: MovePaymentHandler,
    private readonly charges: ChargePaymentsJob,
  ) {}

  /** A new payment attempt per order, none for an order already cancelled (docs/design/payment.md). */
  @EventPattern('inventory.reserved', ATTEMPTS)
  async inventoryReserved(
    @Payload() events: SagaEvent<'inventory.reserved'>[],
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await lockSagas(
      ctx.tx,
      events.map((e) => ({ tenantId: e.tenantId, orderId: e.payload.orderId })),
    );
    for (const event of events) await ctx.eventScope(event, () => this.recordAttempt(ctx.tx, event));
    // The charge worker polls slowly while idle: the attempts just recorded are charged as soon as they commit.
    ctx.afterCommit(async () => this.charges.wake());
  }

  @EventPattern('inventory.unavailable-after-payment')
  async unavailableAfterPayment(
    @Payload() event: SagaEvent<'inventory.unavailable-after-payment'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    await this.refund(tx, event, 'inventory_unavailable_after_payment');
  }

  @EventPattern('fulfillment.shipment-failed')
  async shipmentFailed(
    @Payload() event: SagaEvent<'fulfillment.shipment-failed'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    await this.refund(tx, event, 'shipment_failed');
  }

  @EventPattern('order.cancelled')
  async orderCancelled(
    @Payload() event: SagaEvent<'order.cancelled'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    const { tenantId } = event;
    const { orderId, reason } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    await tx.query(
      `INSERT INTO order_cancellation (tenant_id, order_id, reason) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [tenantId, orderId, reason],
    );
    const attempt = await findPaymentByOrder(tx, tenantId, orderId);
    // Not sent to the PSP yet (the charge worker moves it to pending first): it never will be.
    if (attempt?.state === 'created')
      await this.move.execute(tx, {
        paymentId: attempt.id,
        tenantId: attempt.tenant_id,
        to: 'failed',
        source: 'charge',
        failureReason: 'order_cancelled',
        detail: `order cancelled (${reason}) before the charge`,
      });
    if (event.payload.refundIfCharged) await this.refund(tx, event, `order_cancelled_${reason}`);
  }

  private async refund(
    tx: EntityManager,
    event: SagaEvent<
      'inventory.unavailable-after-payment' | 'fulfillment.shipment-failed' | 'order.cancelled'
    >,
    reason: string,
  ): Promise<void> {
    await this.refunds.execute(tx, {
      tenantId: event.tenantId,
      orderId: event.payload.orderId,
      reason,
      cause: storeCause(event),
    });
  }

  private async recordAttempt(tx: EntityManager, event: SagaEvent<'inventory.reserved'>): Promise<void> {
    const tenantId = event.tenantId;
    // The public account id is stored, never its secret key (the PSP client looks that up per call).
    const account = this.accounts.forTenant(tenantId);
    if (!account)
      throw new NonRetryableError(
        'PAYMENT.NO_PSP_ACCOUNT',
        `tenant ${tenantId} has no PSP account configured`,
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
        tenantId,
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
        [id, tenantId],
      );
    }
  }
}
