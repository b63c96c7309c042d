import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { requireKnownSaga } from '../../consumers/tenant-check';
import { FulfillmentMetrics } from '../../fulfillment.metrics';
import { CancelShipment } from '../commands';

/** payment.refunded -> CancelShipment (a booked shipment is called back; nothing else changes). */
export const onPaymentRefunded =
  (
    tenants: TenantRegistry,
    cancelShipment: CancelShipment,
    metrics: FulfillmentMetrics,
  ): EventHandler<'payment.refunded'> =>
  async (event, tx) => {
    const { orderId, reason } = event.payload;
    requireKnownSaga(tenants, event, orderId);
    const outcome = await cancelShipment.execute(tx, {
      tenantId: event.tenantId,
      orderId,
      reason: `order_refunded: ${reason}`,
      cause: event,
    });
    if (outcome === 'cancelled') metrics.shipmentDecided('cancelled');
  };
