import { EntityManager } from 'typeorm';
import { Line } from '../domain';
import { sql } from './sql';

/** One order of a reservation batch: its lines, one per SKU, sorted by SKU. */
export interface BatchOrder {
  orderId: string;
  lines: Line[];
}

/** What the batch statement decided for one order. */
export interface BatchDecision {
  orderId: string;
  /** Every line was taken (all or nothing). */
  held: boolean;
  /** The SKUs that did not have enough units when the order's turn came. */
  shortSkus: string[];
  /** The earliest expires_at of the order's reservation rows (held orders only). */
  expiresAt: Date | null;
}

/**
 * Group commit of many orders of one tenant in one statement. The stock rows of every SKU of the batch are
 * locked once, in SKU order (the order every writer uses, so no deadlock). A recursive walk then visits the
 * orders in batch order and accepts an order only if every one of its lines fits in what the orders before it
 * left (first fit, all or nothing per order). One conditional UPDATE per SKU takes the accepted units
 * (`WHERE available >= total`, judged by its row count) and the reservation rows are inserted, each with its
 * own SKU's TTL. The decision is made by the database under the row locks, never from a value the app read.
 */
const RESERVE_BATCH = `
  WITH RECURSIVE
    lines AS (SELECT ord, sku, qty FROM unnest($2::int[], $3::text[], $4::int[]) AS l(ord, sku, qty)),
    orders AS (SELECT ord::int AS ord, order_id FROM unnest($5::uuid[]) WITH ORDINALITY AS o(order_id, ord)),
    locked AS MATERIALIZED (
      SELECT sku, available, reservation_ttl_seconds FROM stock
       WHERE tenant_id = $1 AND sku IN (SELECT sku FROM lines)
       ORDER BY sku FOR UPDATE),
    walk (ord, left_units, fits, short) AS (
      SELECT 0, (SELECT coalesce(jsonb_object_agg(sku, available), '{}') FROM locked), true, NULL::text[]
      UNION ALL
      SELECT w.ord + 1,
             CASE WHEN step.fits THEN w.left_units || step.after ELSE w.left_units END,
             step.fits, step.short
        FROM walk w,
        LATERAL (
          SELECT coalesce(bool_and(coalesce((w.left_units ->> l.sku)::int, -1) >= l.qty), false) AS fits,
                 jsonb_object_agg(l.sku, coalesce((w.left_units ->> l.sku)::int, 0) - l.qty) AS after,
                 array_agg(l.sku ORDER BY l.sku)
                   FILTER (WHERE coalesce((w.left_units ->> l.sku)::int, -1) < l.qty) AS short
            FROM lines l WHERE l.ord = w.ord + 1) step
       WHERE w.ord < $6),
    decided AS (SELECT ord, fits, short FROM walk WHERE ord > 0),
    taken AS (
      SELECT l.sku, sum(l.qty)::int AS qty FROM lines l JOIN decided d USING (ord) WHERE d.fits GROUP BY l.sku),
    moved AS (
      UPDATE stock s SET available = s.available - t.qty, reserved = s.reserved + t.qty, updated_at = now()
        FROM taken t
       WHERE s.tenant_id = $1 AND s.sku = t.sku AND s.available >= t.qty
      RETURNING s.sku),
    held AS (
      INSERT INTO reservation (tenant_id, order_id, sku, qty, status, expires_at)
      SELECT $1, o.order_id, l.sku, l.qty, 'held',
             now() + make_interval(secs => coalesce(k.reservation_ttl_seconds, $7))
        FROM lines l JOIN decided d USING (ord) JOIN orders o USING (ord) JOIN locked k USING (sku)
       WHERE d.fits
      RETURNING order_id, expires_at)
  SELECT o.order_id AS "orderId", d.fits AS held, coalesce(d.short, '{}') AS "shortSkus",
         (SELECT min(h.expires_at) FROM held h WHERE h.order_id = o.order_id) AS "expiresAt",
         (SELECT count(*) FROM moved)::int AS moved, (SELECT count(*) FROM taken)::int AS taken
    FROM decided d JOIN orders o USING (ord) ORDER BY d.ord`;

/**
 * Holds the orders that fit, all lines or none each, in one statement (see RESERVE_BATCH); returns one
 * decision per order in input order. Must run inside the caller's transaction: the row locks and the
 * reservation rows commit with the outbox events the caller writes.
 */
export async function holdOrders(
  tx: EntityManager,
  tenantId: string,
  orders: BatchOrder[],
  defaultTtlSeconds: number,
): Promise<BatchDecision[]> {
  if (orders.length === 0) return [];
  const ords: number[] = [];
  const skus: string[] = [];
  const qtys: number[] = [];
  orders.forEach((o, i) =>
    o.lines.forEach((l) => {
      ords.push(i + 1);
      skus.push(l.sku);
      qtys.push(l.quantity);
    }),
  );
  const { rows } = await sql<BatchDecision & { moved: number; taken: number }>(tx, RESERVE_BATCH, [
    tenantId,
    ords,
    skus,
    qtys,
    orders.map((o) => o.orderId),
    orders.length,
    defaultTtlSeconds,
  ]);
  // Under the row locks the walk and the conditional UPDATE see the same units: a mismatch is a bug, and
  // throwing rolls the whole transaction back rather than holding stock the counters do not show.
  if (rows.length !== orders.length || (rows[0] && rows[0].moved !== rows[0].taken)) {
    throw new Error(
      `reservation batch of ${orders.length} orders: ${rows.length} decisions, ${rows[0]?.moved} of ${rows[0]?.taken} stock rows moved`,
    );
  }
  return rows.map(({ orderId, held, shortSkus, expiresAt }) => ({ orderId, held, shortSkus, expiresAt }));
}

/** An order of the batch inventory has seen before: reserved already, or cancelled before it was reserved. */
export interface SeenOrder {
  orderId: string;
  /** Seen cancelled (order_cancellation), else it has reservation rows. */
  cancelled: boolean;
}

/** Which of these orders already have reservation rows or were recorded cancelled (one row per fact). */
export async function seenOrders(
  tx: EntityManager,
  tenantId: string,
  orderIds: string[],
): Promise<SeenOrder[]> {
  const { rows } = await sql<{ order_id: string; cancelled: boolean }>(
    tx,
    `SELECT DISTINCT order_id, false AS cancelled FROM reservation WHERE tenant_id = $1 AND order_id = ANY($2::uuid[])
       UNION ALL
       SELECT order_id, true FROM order_cancellation WHERE tenant_id = $1 AND order_id = ANY($2::uuid[])`,
    [tenantId, orderIds],
  );
  return rows.map((r) => ({ orderId: r.order_id, cancelled: r.cancelled }));
}
