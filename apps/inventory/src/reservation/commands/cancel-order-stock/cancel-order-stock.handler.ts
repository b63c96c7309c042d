import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { lockSaga } from '@checkout/messaging';
import { recordCancellation } from '../../database/stock.repository';
import { ReleaseStockHandler } from '../release-stock/release-stock.handler';
import { ReturnSoldStockHandler } from '../return-sold-stock/return-sold-stock.handler';

/**
 * CancelOrderStockHandler on order.cancelled: a cancelled order keeps no goods. Under the order's lock the
 * cancellation is recorded first (an order.created applied later reserves nothing), held lines go back
 * (inventory.released, reason order_cancelled) and lines already committed, because inventory saw
 * payment.succeeded before the cancel (the two arrive on different topics), return to available; the payment
 * service refunds that charge.
 */
@Injectable()
export class CancelOrderStockHandler {
  constructor(
    private readonly release: ReleaseStockHandler,
    private readonly returnSold: ReturnSoldStockHandler,
  ) {}

  async execute(tx: EntityManager, event: SagaEvent<'order.cancelled'>): Promise<void> {
    const { tenantId } = event;
    const { orderId } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    await recordCancellation(tx, tenantId, orderId);
    await this.release.execute(tx, { tenantId, orderId, reason: 'order_cancelled', cause: event });
    await this.returnSold.execute(tx, { tenantId, orderId });
  }
}
