import { EntityManager } from 'typeorm';
import { sql } from '@checkout/messaging';

export { sql, SqlResult } from '@checkout/messaging';

/**
 * Serialises every change of one order's fulfillment state (order.paid against payment.refunded arriving
 * on different partitions at once) until the transaction ends.
 */
export async function lockOrder(tx: EntityManager, tenantId: string, orderId: string): Promise<void> {
  await sql(tx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`${tenantId}/${orderId}`]);
}
