import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { UndoCheckoutHandler } from '../undo-checkout/undo-checkout.handler';
import { OrderRepository } from '../../database/order.repository';
import { SagaStep, moveOrder } from '../saga-step';

/**
 * CancelAfterPaymentFailure (payment.failed): CANCELLED, order.cancelled(payment_failed) for inventory to release
 * the stock, and checkout undone. A late success finds the order CANCELLED and does not revive it.
 */
@Injectable()
export class CancelAfterPaymentFailureHandler {
  constructor(
    private readonly orders: OrderRepository,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly undoCheckout: UndoCheckoutHandler,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'payment.failed'>): Promise<void> {
    const moved = await moveOrder(this.orders, this.logger, step.tx, e, 'CANCELLED');
    if (!moved) return;
    await this.outbox.append(step.tx, {
      type: 'order.cancelled',
      tenantId: e.tenantId,
      sagaId: e.sagaId,
      cause: e,
      payload: { orderId: e.sagaId, reason: 'payment_failed', refundIfCharged: false },
    });
    await this.undoCheckout.execute(step, e, moved);
  }
}
