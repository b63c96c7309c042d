import { EntityManager } from 'typeorm';
import { sql } from './sql';

/** One order of one tenant: the unit every reaction of a service serialises on. */
export interface SagaKey {
  tenantId: string;
  orderId: string;
}

/**
 * The saga locks each transaction holds (by lock name). A transaction-scoped advisory lock is held until the
 * transaction ends, so taking it again in the same transaction is a round trip that changes nothing: lockSagas
 * skips it. Keyed by the transaction's EntityManager (a retry runs in a new one).
 */
const held = new WeakMap<EntityManager, Set<string>>();

const lockName = (k: SagaKey): string => `${k.tenantId}/${k.orderId}`;

/**
 * A query of one row that takes the locks of the names in parameter `$n` (text[]), in lock-key order (the inbox
 * transport's insert takes its events' locks with it, as a MATERIALIZED CTE: evaluated once).
 */
export const sagaLocksQuery = (n: number): string =>
  `SELECT count(*) AS locked
     FROM (SELECT pg_advisory_xact_lock(k.id)
             FROM (SELECT DISTINCT hashtextextended(name, 0) AS id FROM unnest($${n}::text[]) AS name ORDER BY id) AS k
          ) AS l`;

/** The lock names of keys, once each. */
export const sagaLockNames = (keys: readonly SagaKey[]): string[] => [...new Set(keys.map(lockName))];

/** Records that the transaction holds these locks (taken by a statement of its own, as the transport does). */
export function noteSagaLocks(tx: EntityManager, names: readonly string[]): void {
  const mine = held.get(tx) ?? new Set<string>();
  for (const name of names) mine.add(name);
  held.set(tx, mine);
}

/**
 * Serialises every change one service makes for an order until the transaction ends: events of different
 * topics (order.created against order.cancelled, inventory.reserved against order.cancelled) arrive on
 * different partitions and consumer groups at once, and in READ COMMITTED neither would see the other's
 * uncommitted rows. One transaction-scoped advisory lock per (tenant, order), taken first in the transaction
 * and in one stable order (by lock key) so that a chunk locking many orders never deadlocks with another.
 * Locks the transaction already holds are not asked for again (the consumer transport takes its events' locks
 * with their inbox rows when the service asks it to: `sagaLocks`).
 */
export async function lockSagas(tx: EntityManager, keys: readonly SagaKey[]): Promise<void> {
  const mine = held.get(tx);
  const names = sagaLockNames(keys).filter((name) => !mine?.has(name));
  if (names.length === 0) return;
  await sql(tx, sagaLocksQuery(1), [names]);
  noteSagaLocks(tx, names);
}

/** lockSagas for one order. */
export const lockSaga = (tx: EntityManager, tenantId: string, orderId: string): Promise<void> =>
  lockSagas(tx, [{ tenantId, orderId }]);
