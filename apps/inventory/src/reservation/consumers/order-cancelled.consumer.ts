import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { ReleaseStock } from '../commands';
import { requireKnownSaga } from './tenant-check';

/** order.cancelled -> ReleaseStock (inventory.released, reason order_cancelled); committed lines stay sold. */
export const onOrderCancelled =
  (tenants: TenantRegistry, release: ReleaseStock): EventHandler<'order.cancelled'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    const { tenantId } = event;
    await release.execute(tx, {
      tenantId,
      orderId: event.payload.orderId,
      reason: 'order_cancelled',
      cause: event,
    });
  };
