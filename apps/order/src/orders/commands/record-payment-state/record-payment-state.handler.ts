import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { OrderRepository } from '../../database/order.repository';
import { SagaStep, moveOrder } from '../saga-step';

/**
 * RecordPaymentState (payment.succeeded, .failed, .refunded): the order's record of its payment; a refund also
 * moves the order to REFUNDED. For payment.succeeded, says whether the stock half of PAID is recorded too (false:
 * not yet, MarkPaid has nothing to try; null: the payment state did not move, let MarkPaid's guard decide).
 */
@Injectable()
export class RecordPaymentStateHandler {
  constructor(
    private readonly orders: OrderRepository,
    private readonly logger: PinoLogger,
  ) {}

  async execute(
    step: SagaStep,
    e: SagaEvent<'payment.succeeded'> | SagaEvent<'payment.failed'> | SagaEvent<'payment.refunded'>,
  ): Promise<boolean | null> {
    const { tx } = step;
    if (e.type === 'payment.succeeded') {
      const p = (e as SagaEvent<'payment.succeeded'>).payload;
      return this.orders.movePayment(tx, e.tenantId, e.sagaId, 'succeeded', {
        paymentId: p.paymentId,
        pspReference: p.pspReference,
        paidAt: p.succeededAt,
      });
    } else if (e.type === 'payment.failed') {
      await this.orders.movePayment(tx, e.tenantId, e.sagaId, 'failed', { paymentId: e.payload.paymentId });
    } else {
      await this.orders.movePayment(tx, e.tenantId, e.sagaId, 'refunded', { paymentId: e.payload.paymentId });
      await moveOrder(this.orders, this.logger, tx, e, 'REFUNDED');
    }
    return null;
  }
}
