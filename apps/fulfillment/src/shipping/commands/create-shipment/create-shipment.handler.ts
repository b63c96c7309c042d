import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OrderPaidV1, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER, SERVICE_CONFIG } from '@checkout/service-kit';
import { FulfillmentConfig } from '../../../config/fulfillment.config';
import { CarrierRules, decideBooking } from '../../domain';
import { insertShipment, isOrderRefunded, lockOrder } from '../../database/shipment.repository';
import { ShippingMetrics } from '../../shipping.metrics';

/** The carrier settings CreateShipment books with. */
export type CarrierConfig = Pick<
  FulfillmentConfig,
  'CARRIER_NAME' | 'CARRIER_FAIL_SKUS' | 'CARRIER_FAIL_CUSTOMERS'
>;

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
@Injectable()
export class CreateShipmentHandler {
  private readonly rules: CarrierRules;

  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(SERVICE_CONFIG) config: CarrierConfig,
    private readonly metrics: ShippingMetrics,
  ) {
    this.rules = {
      carrier: config.CARRIER_NAME,
      failSkus: config.CARRIER_FAIL_SKUS,
      failCustomers: config.CARRIER_FAIL_CUSTOMERS,
    };
  }

  /** Books the order (see the class) and counts the decision. */
  async execute(tx: EntityManager, input: CreateShipmentInput): Promise<CreateShipmentOutcome> {
    const outcome = await this.book(tx, input);
    this.metrics.shipmentDecided(outcome);
    return outcome;
  }

  private async book(
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
