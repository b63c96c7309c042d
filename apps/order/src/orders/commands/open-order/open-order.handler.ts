import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { pricedSnapshot } from '../../domain/order-snapshot';
import { NewOrder, OrderRepository } from '../../database/order.repository';

/** OpenOrder: a PENDING order with its lines and first history entry, and `order.created`, in one transaction. */
@Injectable()
export class OpenOrderHandler {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly orders: OrderRepository,
  ) {}

  async execute(tx: EntityManager, order: NewOrder): Promise<void> {
    await this.orders.insert(tx, order);
    await this.outbox.append(tx, {
      type: 'order.created',
      tenantId: order.tenantId,
      sagaId: order.id,
      payload: {
        orderId: order.id,
        ...pricedSnapshot(order),
        paymentToken: order.paymentToken,
      },
    });
  }
}
