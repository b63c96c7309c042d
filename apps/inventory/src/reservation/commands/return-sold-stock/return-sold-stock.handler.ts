import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { lockSaga } from '@checkout/messaging';
import { Line } from '../../domain';
import { cancelOpenBackorders, markSoldReturned, soldToAvailable } from '../../database/stock.repository';

/** Input of ReturnSoldStockHandler: the order whose shipment failed. */
export interface ReturnSoldStockInput {
  tenantId: string;
  orderId: string;
}

/**
 * ReturnSoldStockHandler, the compensation of CommitStockHandler when the shipment fails: the order's sold units go back
 * to available and its open backorders are cancelled. Idempotent: each committed line is returned once
 * (returned_at), a second call finds nothing.
 */
@Injectable()
export class ReturnSoldStockHandler {
  /** fulfillment.shipment-failed, under the order's lock: the sold units go back to available, once. */
  async onShipmentFailed(
    tx: EntityManager,
    event: SagaEvent<'fulfillment.shipment-failed'>,
  ): Promise<Line[]> {
    const { tenantId } = event;
    const { orderId } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    return this.execute(tx, { tenantId, orderId });
  }

  async execute(tx: EntityManager, { tenantId, orderId }: ReturnSoldStockInput): Promise<Line[]> {
    const returned = await markSoldReturned(tx, tenantId, orderId);
    for (const line of returned) await soldToAvailable(tx, tenantId, line);
    await cancelOpenBackorders(tx, tenantId, orderId);
    return returned;
  }
}
