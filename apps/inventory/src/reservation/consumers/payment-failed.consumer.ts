import { EventHandler, lockSaga } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { ReleaseStock } from '../commands';
import { requireKnownSaga } from './tenant-check';

/** payment.failed -> ReleaseStock (inventory.released, reason payment_failed). */
export const onPaymentFailed =
  (tenants: TenantRegistry, release: ReleaseStock): EventHandler<'payment.failed'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    const { tenantId } = event;
    await release.execute(tx, {
      tenantId,
      orderId: event.payload.orderId,
      reason: 'payment_failed',
      cause: event,
    });
  };
