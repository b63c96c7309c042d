import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  StoredCause,
  findPaymentByOrder,
  insertRefund,
  updateReturning,
} from '../../database/payment.repository';

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
  async execute(
    tx: EntityManager,
    r: { tenantId: string; orderId: string; reason: string; cause: StoredCause },
  ): Promise<RefundRequestOutcome> {
    const payment = await findPaymentByOrder(tx, r.tenantId, r.orderId);
    if (!payment) return 'nothing_to_refund';
    const marked = await updateReturning(
      tx,
      `UPDATE payment_attempt SET refund_on_success = COALESCE(refund_on_success, $2), updated_at = now()
        WHERE id = $1 AND state IN ('created', 'pending', 'unknown') RETURNING 1`,
      [payment.id, r.reason],
    );
    if (marked.length === 1) return 'refund_on_success';
    // Re-read after the conditional update: a concurrent success has committed by now, if there was one.
    const now = await findPaymentByOrder(tx, r.tenantId, r.orderId);
    if (now?.state !== 'succeeded' || !now.psp_ref) return 'nothing_to_refund';
    const inserted = await insertRefund(tx, {
      id: randomUUID(),
      tenantId: now.tenant_id,
      orderId: now.order_id,
      paymentId: now.id,
      pspAccount: now.psp_account,
      pspChargeId: now.psp_ref,
      amount: Number(now.amount),
      currency: now.currency,
      reason: r.reason,
      cause: r.cause,
    });
    return inserted ? 'refund_requested' : 'already_requested';
  }
}
