import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { requireKnownSaga } from '../../consumers/tenant-check';
import { RecordNotification } from '../commands';

/** payment.failed -> the payment-failed email. */
export const onPaymentFailed =
  (tenants: TenantRegistry, notify: RecordNotification): EventHandler<'payment.failed'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await notify.paymentFailed(tx, event.tenantId, event.payload, event);
  };
