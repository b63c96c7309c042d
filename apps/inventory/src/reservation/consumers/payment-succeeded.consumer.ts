import { EventHandler, NonRetryableError, lockSaga } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { CommitStock } from '../commands';
import { requireKnownSaga } from './tenant-check';

/** payment.succeeded -> CommitStock (committed, backordered or unavailable-after-payment). */
export const onPaymentSucceeded =
  (tenants: TenantRegistry, commit: CommitStock): EventHandler<'payment.succeeded'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await lockSaga(tx, event.tenantId, event.payload.orderId);
    const result = await commit.execute(tx, {
      tenantId: event.tenantId,
      orderId: event.payload.orderId,
      cause: event,
    });
    if (result.kind === 'no_reservation') {
      // Payment only charges after inventory.reserved: money for an order we never held is for SREs to see.
      throw new NonRetryableError(
        'INVENTORY.NO_RESERVATION',
        `no reservation for paid order ${event.payload.orderId}`,
      );
    }
  };
