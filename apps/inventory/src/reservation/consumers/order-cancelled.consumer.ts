import { EventHandler, lockSaga } from '@checkout/messaging';
import { sql } from '../database/sql';
import { TenantRegistry } from '@checkout/service-kit';
import { ReleaseStock, ReturnSoldStock } from '../commands';
import { requireKnownSaga } from './tenant-check';

/**
 * order.cancelled -> ReleaseStock (held lines back, inventory.released with reason order_cancelled) and
 * ReturnSoldStock: a cancelled order keeps no goods. Lines are committed when inventory saw payment.succeeded
 * before the cancel (the two arrive on different topics); the payment service refunds that charge. Under the
 * order's lock, the cancellation is recorded first, so an order.created applied later reserves nothing.
 */
export const onOrderCancelled =
  (
    tenants: TenantRegistry,
    release: ReleaseStock,
    returnSold: ReturnSoldStock,
  ): EventHandler<'order.cancelled'> =>
  async (event, tx) => {
    requireKnownSaga(tenants, event, event.payload.orderId);
    const { tenantId } = event;
    const orderId = event.payload.orderId;
    await lockSaga(tx, tenantId, orderId);
    await sql(
      tx,
      `INSERT INTO order_cancellation (tenant_id, order_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [tenantId, orderId],
    );
    await release.execute(tx, { tenantId, orderId, reason: 'order_cancelled', cause: event });
    await returnSold.execute(tx, { tenantId, orderId });
  };
