import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { requireKnownSaga } from '../../consumers/tenant-check';
import { rememberCustomer } from '../../notifications/database/notification.repository';
import { RecordNotification } from '../../notifications/commands';
import { FulfillmentMetrics } from '../../fulfillment.metrics';
import { CreateShipment } from '../commands';

/** order.paid -> CreateShipment (shipment-created or shipment-failed) and the order confirmation email. */
export const onOrderPaid =
  (
    tenants: TenantRegistry,
    createShipment: CreateShipment,
    notify: RecordNotification,
    metrics: FulfillmentMetrics,
  ): EventHandler<'order.paid'> =>
  async (event, tx) => {
    const order = event.payload;
    requireKnownSaga(tenants, event, order.orderId, order.tenantId);
    await rememberCustomer(tx, event.tenantId, order.orderId, order.customerId);
    const outcome = await createShipment.execute(tx, { tenantId: event.tenantId, order, cause: event });
    metrics.shipmentDecided(outcome);
    if (outcome === 'skipped_refunded') return;
    await notify.confirmOrder(tx, event.tenantId, order, event);
  };
