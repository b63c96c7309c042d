import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { requireKnownSaga } from '../../consumers/tenant-check';
import { RecordNotification } from '../commands';

/** inventory.unavailable-after-payment -> the apology email with a voucher code (payment refunds). */
export const onUnavailableAfterPayment =
  (
    tenants: TenantRegistry,
    notify: RecordNotification,
  ): EventHandler<'inventory.unavailable-after-payment'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await notify.apologise(tx, event.tenantId, event.payload, event);
  };
