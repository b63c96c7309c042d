import { EventHandler } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { ReserveStock } from '../commands';
import { parkingRuleErrors, requireKnownSaga } from './tenant-check';

/** order.created -> ReserveStock (inventory.reserved or inventory.rejected). */
export const onOrderCreated =
  (tenants: TenantRegistry, reserve: ReserveStock): EventHandler<'order.created'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    await parkingRuleErrors(() =>
      reserve.execute(tx, { tenantId: event.tenantId, order: event.payload, cause: event }),
    );
  };
