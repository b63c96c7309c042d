import { BatchEventHandler, lockSagas } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { ReserveStockBatch } from '../commands';
import { parkingRuleErrors, requireKnownSaga } from './tenant-check';

/**
 * order.created, a batch at a time -> ReserveStockBatch (one inventory.reserved or .rejected per order, nothing
 * for an order already cancelled). Every order of the chunk is locked first, in lockSagas' stable order, so
 * its order.cancelled (another consumer group) waits for this or is seen by it.
 */
export const onOrderCreated =
  (tenants: TenantRegistry, reserve: ReserveStockBatch): BatchEventHandler<'order.created'> =>
  async (events, tx) => {
    // One event of another tenant or with a wrong saga id fails the chunk; alone, it is parked on the DLQ.
    for (const event of events) requireKnownSaga(tenants, event, event.payload.orderId);
    await lockSagas(
      tx,
      events.map((e) => ({ tenantId: e.tenantId, orderId: e.payload.orderId })),
    );
    await parkingRuleErrors(() =>
      reserve.execute(
        tx,
        events.map((event) => ({ tenantId: event.tenantId, order: event.payload, cause: event })),
      ),
    );
  };
