import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { cancelShipment, lockOrder, markOrderRefunded } from '../../database/shipment.repository';
import { ShippingMetrics } from '../../shipping.metrics';

/** What CancelShipment did: cancelled a booked shipment, or found nothing to undo. */
export type CancelShipmentOutcome = 'cancelled' | 'nothing_to_cancel';

/** Input of CancelShipment: the refunded order and the event it reacts to. */
export interface CancelShipmentInput {
  tenantId: string;
  orderId: string;
  reason: string;
  cause: SagaEvent;
}

/**
 * CancelShipment, the compensation of CreateShipment when the order is refunded: a booked shipment moves to
 * cancelled (conditional update) and fulfillment.shipment-cancelled is published. Idempotent, and a no-op for
 * a failed, already cancelled or missing shipment; it also marks the order refunded so that a later
 * order.paid never books it.
 */
@Injectable()
export class CancelShipmentHandler {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly metrics: ShippingMetrics,
  ) {}

  async execute(
    tx: EntityManager,
    { tenantId, orderId, reason, cause }: CancelShipmentInput,
  ): Promise<CancelShipmentOutcome> {
    await lockOrder(tx, tenantId, orderId);
    await markOrderRefunded(tx, tenantId, orderId);
    const cancelled = await cancelShipment(tx, tenantId, orderId, reason);
    if (!cancelled) return 'nothing_to_cancel';
    await this.outbox.append(tx, {
      type: 'fulfillment.shipment-cancelled',
      tenantId,
      sagaId: orderId,
      cause,
      payload: {
        orderId,
        shipmentId: cancelled.shipmentId,
        carrier: cancelled.carrier,
        trackingNumber: cancelled.trackingNumber!,
        lines: cancelled.lines,
        reason: reason.slice(0, 255),
      },
    });
    this.metrics.shipmentDecided('cancelled');
    return 'cancelled';
  }
}
