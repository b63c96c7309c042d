import { EventHandler, lockSaga } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { ReturnSoldStock } from '../commands';
import { requireKnownSaga } from './tenant-check';

/** fulfillment.shipment-failed -> ReturnSoldStock (sold units back to available, once). */
export const onShipmentFailed =
  (tenants: TenantRegistry, returnSold: ReturnSoldStock): EventHandler<'fulfillment.shipment-failed'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    await returnSold.execute(tx, { tenantId: event.tenantId, orderId: event.payload.orderId });
  };
