import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { OrderPaidV1, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { CarrierRules, decideBooking } from '../../domain';
import { insertShipment, isOrderRefunded } from '../../database/shipment.repository';
import { lockOrder } from '../../../database/sql';

/** What CreateShipment did for one order.paid. */
export type CreateShipmentOutcome = 'created' | 'failed' | 'duplicate' | 'skipped_refunded';

/** Input of CreateShipment: the paid order and the event it reacts to. */
export interface CreateShipmentInput {
  tenantId: string;
  order: OrderPaidV1;
  cause: SagaEvent;
}

/**
 * CreateShipment: books the paid order with the carrier, once per (tenant, order), and publishes
 * fulfillment.shipment-created, or fulfillment.shipment-failed when the carrier refuses (payment refunds and
 * inventory returns the units in reaction). Its compensation is CancelShipment. A redelivered or replayed
 * order.paid finds the shipment and publishes nothing; an order already refunded is not shipped.
 */
export class CreateShipment {
  constructor(
    private readonly outbox: OutboxWriter,
    private readonly rules: CarrierRules,
  ) {}

  async execute(
    tx: EntityManager,
    { tenantId, order, cause }: CreateShipmentInput,
  ): Promise<CreateShipmentOutcome> {
    await lockOrder(tx, tenantId, order.orderId);
    if (await isOrderRefunded(tx, tenantId, order.orderId)) return 'skipped_refunded';
    const shipmentId = randomUUID();
    const lines = order.lines.map((l) => ({ sku: l.sku, quantity: l.quantity }));
    const decision = decideBooking(this.rules, { shipmentId, customerId: order.customerId, lines });
    const inserted = await insertShipment(tx, {
      id: shipmentId,
      tenantId,
      orderId: order.orderId,
      customerId: order.customerId,
      status: decision.accepted ? 'created' : 'failed',
      carrier: decision.carrier,
      trackingNumber: decision.accepted ? decision.trackingNumber : null,
      failureReason: decision.accepted ? null : decision.reason,
      lines,
    });
    if (!inserted) return 'duplicate';
    if (decision.accepted) {
      await this.outbox.append(tx, {
        type: 'fulfillment.shipment-created',
        tenantId,
        sagaId: order.orderId,
        cause,
        payload: {
          orderId: order.orderId,
          shipmentId,
          carrier: decision.carrier,
          trackingNumber: decision.trackingNumber,
        },
      });
      return 'created';
    }
    await this.outbox.append(tx, {
      type: 'fulfillment.shipment-failed',
      tenantId,
      sagaId: order.orderId,
      cause,
      payload: { orderId: order.orderId, lines, reason: decision.reason },
    });
    return 'failed';
  }
}
