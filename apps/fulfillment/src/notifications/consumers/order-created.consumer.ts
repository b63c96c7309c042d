import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { requireKnownSaga } from '../../consumers/tenant-check';
import { rememberCustomer } from '../database/notification.repository';

/** order.created -> remember the order's customer (the recipient of later emails whose events lack it). */
export const onOrderCreated =
  (tenants: TenantRegistry): EventHandler<'order.created'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await rememberCustomer(tx, event.tenantId, event.payload.orderId, event.payload.customerId);
  };
