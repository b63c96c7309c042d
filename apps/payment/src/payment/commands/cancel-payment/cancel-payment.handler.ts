import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { lockSaga } from '@checkout/messaging';
import { findPaymentByOrder, recordCancellation } from '../../database/payment.repository';
import { MovePaymentHandler, storeCause } from '../move-payment/move-payment.handler';
import { RequestRefundHandler } from '../request-refund/request-refund.handler';

/**
 * CancelPayment (order.cancelled), under the order's lock: the cancellation is remembered (a later
 * inventory.reserved records no attempt), an attempt not yet sent to the PSP fails, and when the event asks for it
 * a charge is refunded (or marked to be, if its outcome is still open).
 */
@Injectable()
export class CancelPaymentHandler {
  constructor(
    private readonly move: MovePaymentHandler,
    private readonly refunds: RequestRefundHandler,
  ) {}

  async execute(tx: EntityManager, event: SagaEvent<'order.cancelled'>): Promise<void> {
    const { tenantId } = event;
    const { orderId, reason, refundIfCharged } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    await recordCancellation(tx, tenantId, orderId, reason);
    const attempt = await findPaymentByOrder(tx, tenantId, orderId);
    // Not sent to the PSP yet (the charge worker moves it to pending first): it never will be.
    if (attempt?.state === 'created')
      await this.move.execute(tx, {
        paymentId: attempt.id,
        tenantId: attempt.tenantId,
        to: 'failed',
        source: 'charge',
        failureReason: 'order_cancelled',
        detail: `order cancelled (${reason}) before the charge`,
      });
    if (refundIfCharged)
      await this.refunds.execute(tx, {
        tenantId,
        orderId,
        reason: `order_cancelled_${reason}`,
        cause: storeCause(event),
      });
  }
}
