import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { lockSaga } from '@checkout/messaging';
import {
  StoredCause,
  findPaymentByOrder,
  insertRefund,
  markRefundOnSuccess,
} from '../../database/payment.repository';
import { storeCause } from '../move-payment/move-payment.handler';

/** What RequestRefund did. */
export type RefundRequestOutcome =
  'refund_requested' | 'refund_on_success' | 'nothing_to_refund' | 'already_requested';

/**
 * RequestRefund (the compensation of a charge), inside the triggering event's transaction: a succeeded payment
 * gets one durable refund row; a payment whose outcome is still open is marked so that money arriving later is
 * refunded; a failed, refunded or absent payment has nothing to undo.
 */
@Injectable()
export class RequestRefundHandler {
  /** The compensation an event asks for (stock unavailable after payment, shipment failed), under the order's lock. */
  async compensate(
    tx: EntityManager,
    event: SagaEvent<'inventory.unavailable-after-payment' | 'fulfillment.shipment-failed'>,
    reason: string,
  ): Promise<RefundRequestOutcome> {
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    return this.execute(tx, {
      tenantId: event.tenantId,
      orderId: event.payload.orderId,
      reason,
      cause: storeCause(event),
    });
  }

  async execute(
    tx: EntityManager,
    r: { tenantId: string; orderId: string; reason: string; cause: StoredCause },
  ): Promise<RefundRequestOutcome> {
    const payment = await findPaymentByOrder(tx, r.tenantId, r.orderId);
    if (!payment) return 'nothing_to_refund';
    if (await markRefundOnSuccess(tx, payment.id, r.reason)) return 'refund_on_success';
    // Re-read after the conditional update: a concurrent success has committed by now, if there was one.
    const now = await findPaymentByOrder(tx, r.tenantId, r.orderId);
    if (now?.state !== 'succeeded' || !now.pspRef) return 'nothing_to_refund';
    const inserted = await insertRefund(tx, {
      id: randomUUID(),
      tenantId: now.tenantId,
      orderId: now.orderId,
      paymentId: now.id,
      pspAccount: now.pspAccount,
      pspChargeId: now.pspRef,
      amount: Number(now.amount),
      currency: now.currency,
      reason: r.reason,
      cause: r.cause,
    });
    return inserted ? 'refund_requested' : 'already_requested';
  }
}
