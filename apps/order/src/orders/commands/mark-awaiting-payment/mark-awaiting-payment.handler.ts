import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { OrderRepository } from '../../database/order.repository';
import { SagaStep, moveOrder } from '../saga-step';

/** MarkAwaitingPayment (inventory.reserved): the stock is held, the order waits for its payment. */
@Injectable()
export class MarkAwaitingPaymentHandler {
  constructor(
    private readonly orders: OrderRepository,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'inventory.reserved'>): Promise<void> {
    await moveOrder(this.orders, this.logger, step.tx, e, 'AWAITING_PAYMENT');
  }
}
