import { EntityManager } from 'typeorm';
import { sql } from './sql';

/** One order of one tenant: the unit every reaction of a service serialises on. */
export interface SagaKey {
  tenantId: string;
  orderId: string;
}

/**
 * Serialises every change one service makes for an order until the transaction ends: events of different
 * topics (order.created against order.cancelled, inventory.reserved against order.cancelled) arrive on
 * different partitions and consumer groups at once, and in READ COMMITTED neither would see the other's
 * uncommitted rows. One transaction-scoped advisory lock per (tenant, order), taken first in the transaction
 * and in one stable order (by lock key) so that a chunk locking many orders never deadlocks with another.
 */
export async function lockSagas(tx: EntityManager, keys: readonly SagaKey[]): Promise<void> {
  if (keys.length === 0) return;
  const names = [...new Set(keys.map((k) => `${k.tenantId}/${k.orderId}`))];
  await sql(
    tx,
    `SELECT pg_advisory_xact_lock(k.id)
       FROM (SELECT DISTINCT hashtextextended(name, 0) AS id FROM unnest($1::text[]) AS name ORDER BY id) AS k`,
    [names],
  );
}

/** lockSagas for one order. */
export const lockSaga = (tx: EntityManager, tenantId: string, orderId: string): Promise<void> =>
  lockSagas(tx, [{ tenantId, orderId }]);
