import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { settleRefund } from '../../database/payment.repository';
import { TransitionOutcome } from '../../domain/payment-state';
import { PaymentMetrics } from '../../payment.metrics';
import { MovePaymentHandler, asCause } from '../move-payment/move-payment.handler';

/** Who brought the PSP's word on a refund: its response to our request, or a webhook. */
export type RefundNewsSource = 'refund' | 'webhook';

/**
 * SettleRefund: applies the PSP's word on a refund through its state machine, in the caller's transaction
 * (docs/design/payment.md, Refunds).
 */
@Injectable()
export class SettleRefundHandler {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly move: MovePaymentHandler,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('SettleRefund');
  }

  /** The PSP refunded: refund `succeeded`, then the payment `refunded` and its event. */
  async succeeded(
    tx: EntityManager,
    r: { refundId: string; pspRefundId: string; source: RefundNewsSource; pspEventId?: string | null },
  ): Promise<TransitionOutcome> {
    const refund = await settleRefund(tx, r.refundId, { state: 'succeeded', pspRefundId: r.pspRefundId });
    if (!refund) return 'ignored';
    this.logger.info(
      { refundId: refund.id, orderId: refund.orderId, pspRefundId: r.pspRefundId, source: r.source },
      'refund succeeded',
    );
    // An orphaned charge's refund has no payment of ours to move.
    if (!refund.paymentId) return 'applied';
    const moved = await this.move.execute(tx, {
      paymentId: refund.paymentId,
      tenantId: refund.tenantId,
      to: 'refunded',
      source: r.source,
      pspEventId: r.pspEventId ?? null,
      detail: refund.reason,
    });
    if (moved.outcome === 'applied') {
      await this.outbox.append(tx, {
        type: 'payment.refunded',
        tenantId: refund.tenantId,
        sagaId: refund.orderId,
        cause: asCause(refund.cause),
        // The refund's news may come from a PSP webhook or an operator's request: the event stays in the
        // trace of the saga step that asked for the refund.
        traceparent: refund.cause?.traceparent ?? undefined,
        payload: {
          orderId: refund.orderId,
          paymentId: refund.paymentId,
          amount: Number(refund.amount),
          currency: refund.currency,
          pspRefundId: r.pspRefundId,
          reason: refund.reason,
        },
      });
    }
    return 'applied';
  }

  /** The refund will not happen without an operator: park it as `refund_failed`. */
  async failed(
    tx: EntityManager,
    r: { refundId: string; error: string; source: RefundNewsSource },
  ): Promise<TransitionOutcome> {
    const refund = await settleRefund(tx, r.refundId, { state: 'refund_failed', error: r.error });
    if (!refund) return 'ignored';
    this.metrics.refundsParkedTotal.inc();
    this.logger.error(
      {
        refundId: refund.id,
        orderId: refund.orderId,
        tenantId: refund.tenantId,
        attempts: refund.attempts,
        source: r.source,
        err: r.error,
      },
      'refund parked as refund_failed: an operator must look at it',
    );
    return 'applied';
  }
}
