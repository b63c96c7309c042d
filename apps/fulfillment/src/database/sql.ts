import { EntityManager } from 'typeorm';
import { lockSaga } from '@checkout/messaging';

export { sql, SqlResult } from '@checkout/messaging';

/**
 * Serialises every change of one order's fulfillment state (order.paid against payment.refunded arriving
 * on different partitions at once) until the transaction ends.
 */
export const lockOrder = (tx: EntityManager, tenantId: string, orderId: string): Promise<void> =>
  lockSaga(tx, tenantId, orderId);
