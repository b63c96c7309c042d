import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { OrderRepository } from '../../database/order.repository';
import { SagaStep, moveOrder } from '../saga-step';

/** MarkShipped (fulfillment.shipment-created). */
@Injectable()
export class MarkShippedHandler {
  constructor(
    private readonly orders: OrderRepository,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'fulfillment.shipment-created'>): Promise<void> {
    await moveOrder(this.orders, this.logger, step.tx, e, 'SHIPPED');
  }
}
