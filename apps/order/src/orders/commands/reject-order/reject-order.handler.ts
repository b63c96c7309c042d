import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { UndoCheckoutHandler } from '../undo-checkout/undo-checkout.handler';
import { OrderRepository } from '../../database/order.repository';
import { SagaStep, moveOrder } from '../saga-step';

/** RejectOrder (inventory.rejected): REJECTED, and checkout is undone (voucher back, gate units back). */
@Injectable()
export class RejectOrderHandler {
  constructor(
    private readonly orders: OrderRepository,
    private readonly undoCheckout: UndoCheckoutHandler,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'inventory.rejected'>): Promise<void> {
    const moved = await moveOrder(this.orders, this.logger, step.tx, e, 'REJECTED');
    if (moved) await this.undoCheckout.execute(step, e, moved);
  }
}
