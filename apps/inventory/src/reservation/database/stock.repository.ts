import { DataSource, EntityManager } from 'typeorm';
import { Line } from '../domain';
import { sql } from './sql';

/** A stock row as the API shows it. */
export interface StockRow {
  sku: string;
  available: number;
  reserved: number;
  sold: number;
  allowBackorder: boolean;
  restocked: number;
  /** This SKU's reservation TTL; null follows the service default. */
  reservationTtlSeconds: number | null;
}

/** One reservation line returned by a release. */
export interface ReleasedRow {
  tenantId: string;
  orderId: string;
  sku: string;
  qty: number;
}

/** Why held reservations go back to available. */
export type ReleaseReason = 'payment_failed' | 'order_cancelled' | 'expired';

/** Which held reservations a release moves. */
export interface ReleaseScope {
  tenantId: string;
  reason: ReleaseReason;
  /** One order's reservations (compensation); otherwise every expired one in scope. */
  orderId?: string;
  /** Only these SKUs (lazy expiry on the SKUs a reservation found short). */
  skus?: string[];
  /** Only reservations past expires_at. */
  onlyExpired: boolean;
  /** Skip rows another transaction holds (jobs) instead of waiting for them (compensations). */
  skipLocked: boolean;
  limit?: number;
}

const releaseStatement = (skipLocked: boolean) => `
  WITH candidates AS (
    SELECT order_id, sku FROM reservation
     WHERE tenant_id = $1 AND status = 'held'
       AND ($2::uuid IS NULL OR order_id = $2)
       AND ($3::text[] IS NULL OR sku = ANY($3))
       AND (NOT $4::boolean OR expires_at < now())
     ORDER BY order_id, sku
     LIMIT $5
     FOR UPDATE ${skipLocked ? 'SKIP LOCKED' : ''}),
  released AS (
    UPDATE reservation r
       SET status = 'released', release_reason = $6, updated_at = now()
      FROM candidates c
     WHERE r.order_id = c.order_id AND r.sku = c.sku AND r.status = 'held'
    RETURNING r.tenant_id, r.order_id, r.sku, r.qty),
  totals AS (
    SELECT tenant_id, sku, sum(qty)::int AS total FROM released GROUP BY tenant_id, sku),
  locked AS (
    -- stock rows locked in sku order, like every other writer, before the update below touches them
    SELECT s.sku FROM stock s JOIN totals t ON s.tenant_id = t.tenant_id AND s.sku = t.sku
     ORDER BY s.sku FOR UPDATE OF s),
  restocked AS (
    UPDATE stock s
       SET available = s.available + t.total, reserved = s.reserved - t.total, updated_at = now()
      FROM totals t
     WHERE s.tenant_id = t.tenant_id AND s.sku = t.sku AND (SELECT count(*) FROM locked) >= 0
    RETURNING s.sku)
  SELECT tenant_id AS "tenantId", order_id AS "orderId", sku, qty, (SELECT count(*) FROM restocked)::int AS "stockRows"
    FROM released ORDER BY order_id, sku`;

const RELEASE_WAITING = releaseStatement(false);
const RELEASE_SKIPPING = releaseStatement(true);

/**
 * Moves held reservations to released and returns their units to available in one statement (the seed's
 * data-modifying CTE): only `held` rows move, so a second run, a retry or a second job instance finds
 * nothing and never returns stock twice.
 */
export async function releaseHeld(tx: EntityManager, scope: ReleaseScope): Promise<ReleasedRow[]> {
  const { rows } = await sql<ReleasedRow & { stockRows: number }>(
    tx,
    scope.skipLocked ? RELEASE_SKIPPING : RELEASE_WAITING,
    [
      scope.tenantId,
      scope.orderId ?? null,
      scope.skus ?? null,
      scope.onlyExpired,
      scope.limit ?? 10_000,
      scope.reason,
    ],
  );
  return rows.map(({ tenantId, orderId, sku, qty }) => ({ tenantId, orderId, sku, qty }));
}

/** Takes n units of one SKU from available straight into sold if there are n (re-reserve after expiry). */
export async function takeIntoSold(tx: EntityManager, tenantId: string, line: Line): Promise<boolean> {
  const { rowCount } = await sql(
    tx,
    `UPDATE stock SET available = available - $3, sold = sold + $3, updated_at = now()
      WHERE tenant_id = $1 AND sku = $2 AND available >= $3`,
    [tenantId, line.sku, line.quantity],
  );
  return rowCount === 1;
}

/** Moves n held units of one SKU to sold; CHECK (reserved >= 0) refuses a counter that would go negative. */
export async function reservedToSold(tx: EntityManager, tenantId: string, line: Line): Promise<void> {
  await sql(
    tx,
    `UPDATE stock SET reserved = reserved - $3, sold = sold + $3, updated_at = now()
      WHERE tenant_id = $1 AND sku = $2`,
    [tenantId, line.sku, line.quantity],
  );
}

/** Returns n sold units of one SKU to available (the shipment did not leave). */
export async function soldToAvailable(tx: EntityManager, tenantId: string, line: Line): Promise<void> {
  await sql(
    tx,
    `UPDATE stock SET sold = sold - $3, available = available + $3, updated_at = now()
      WHERE tenant_id = $1 AND sku = $2`,
    [tenantId, line.sku, line.quantity],
  );
}

/** The counters of one SKU as they are now in this transaction. */
export async function stockRow(tx: EntityManager, tenantId: string, sku: string): Promise<StockRow> {
  const { rows } = await sql<StockRow>(
    tx,
    `SELECT sku, available, reserved, sold, allow_backorder AS "allowBackorder", restocked::int AS restocked,
            reservation_ttl_seconds AS "reservationTtlSeconds"
       FROM stock WHERE tenant_id = $1 AND sku = $2`,
    [tenantId, sku],
  );
  return rows[0];
}

/**
 * The units of these SKUs a new order could get now, as GET /v1/stock shows them: available plus holds past
 * their TTL (lazy expiry). A SKU the tenant does not stock is absent.
 */
export async function sellableUnits(
  db: EntityManager,
  tenantId: string,
  skus: string[],
): Promise<Map<string, number>> {
  const { rows } = await sql<{ sku: string; units: number }>(
    db,
    `SELECT s.sku, s.available + LEAST(s.reserved, COALESCE((SELECT sum(qty) FROM reservation r
                    WHERE r.tenant_id = s.tenant_id AND r.sku = s.sku
                      AND r.status = 'held' AND r.expires_at < now()), 0))::int AS units
       FROM stock s WHERE s.tenant_id = $1 AND s.sku = ANY($2)`,
    [tenantId, skus],
  );
  return new Map(rows.map((r) => [r.sku, r.units]));
}

/** Which of these SKUs the tenant stocks, and whether each allows backorder. */
export async function stockFlags(
  tx: EntityManager,
  tenantId: string,
  skus: string[],
): Promise<Map<string, { allowBackorder: boolean }>> {
  const { rows } = await sql<{ sku: string; allow_backorder: boolean }>(
    tx,
    `SELECT sku, allow_backorder FROM stock WHERE tenant_id = $1 AND sku = ANY($2)`,
    [tenantId, skus],
  );
  return new Map(rows.map((r) => [r.sku, { allowBackorder: r.allow_backorder }]));
}

/**
 * Sets the on-hand available units of a SKU (creating it) and records the delta as a restock, in one
 * statement: the delta is computed from the row's current value under its lock, never read by the app.
 * `allowBackorder` and `reservationTtlSeconds` left undefined keep their current value; a null TTL goes
 * back to the service default.
 */
export async function setAvailable(
  tx: EntityManager,
  tenantId: string,
  sku: string,
  available: number,
  allowBackorder: boolean | undefined,
  reservationTtlSeconds?: number | null,
): Promise<StockRow & { delta: number }> {
  const { rows } = await sql<StockRow & { delta: number }>(
    tx,
    `WITH upserted AS (
       INSERT INTO stock AS s (tenant_id, sku, available, restocked, last_restock, allow_backorder,
                               reservation_ttl_seconds)
       VALUES ($1, $2, $3::int, $3::int, $3::int, COALESCE($4::boolean, false), $6::int)
       ON CONFLICT (tenant_id, sku) DO UPDATE
         SET available = EXCLUDED.available,
             restocked = s.restocked + (EXCLUDED.available - s.available),
             last_restock = EXCLUDED.available - s.available,
             allow_backorder = COALESCE($4::boolean, s.allow_backorder),
             reservation_ttl_seconds = CASE WHEN $5::boolean THEN $6::int ELSE s.reservation_ttl_seconds END,
             updated_at = now()
       RETURNING *),
     ledger AS (
       INSERT INTO stock_restock (tenant_id, sku, delta, available_after)
       SELECT tenant_id, sku, last_restock, available FROM upserted WHERE last_restock <> 0)
     SELECT sku, available, reserved, sold, allow_backorder AS "allowBackorder",
            restocked::int AS restocked, reservation_ttl_seconds AS "reservationTtlSeconds",
            last_restock AS delta FROM upserted`,
    [
      tenantId,
      sku,
      available,
      allowBackorder ?? null,
      reservationTtlSeconds !== undefined,
      reservationTtlSeconds ?? null,
    ],
  );
  return rows[0];
}

/** Whether any tenant has a held reservation past its expiry (what the expiry job looks at before a pass). */
export async function anyReservationDue(db: DataSource): Promise<boolean> {
  const [{ due }]: { due: boolean }[] = await db.query(
    `SELECT EXISTS (SELECT 1 FROM reservation WHERE status = 'held' AND expires_at <= now()) AS due`,
  );
  return due;
}

/** Remembers that the order was cancelled, so that an order.created applied later reserves nothing. */
export async function recordCancellation(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO order_cancellation (tenant_id, order_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [tenantId, orderId],
  );
}

/** One SKU's counters and the units of its holds past their TTL (GET /v1/stock/{sku}). */
export interface StockWithOverdue {
  sku: string;
  available: number;
  reserved: number;
  sold: number;
  reservationTtlSeconds: number | null;
  overdue: number;
}

/** The SKU's counters with its overdue holds; undefined when the tenant does not stock it. */
export async function stockWithOverdue(
  db: DataSource,
  tenantId: string,
  sku: string,
): Promise<StockWithOverdue | undefined> {
  const rows: StockWithOverdue[] = await db.query(
    `SELECT s.sku, s.available, s.reserved, s.sold, s.reservation_ttl_seconds AS "reservationTtlSeconds",
            COALESCE((SELECT sum(qty) FROM reservation r
                       WHERE r.tenant_id = s.tenant_id AND r.sku = s.sku
                         AND r.status = 'held' AND r.expires_at < now()), 0)::int AS overdue
       FROM stock s WHERE s.tenant_id = $1 AND s.sku = $2`,
    [tenantId, sku],
  );
  return rows[0];
}

/** Per tenant with any: how many held reservations are past their expiry, and for how long the oldest is. */
export async function overdueHolds(
  db: DataSource,
  tenantIds: string[],
): Promise<Map<string, { count: number; oldestSeconds: number }>> {
  const rows: { tenant_id: string; count: number; oldest: number }[] = await db.query(
    `SELECT tenant_id, count(*)::int AS count, EXTRACT(EPOCH FROM now() - min(expires_at))::float8 AS oldest
       FROM reservation
      WHERE tenant_id = ANY($1) AND status = 'held' AND expires_at < now()
      GROUP BY tenant_id`,
    [tenantIds],
  );
  return new Map(rows.map((r) => [r.tenant_id, { count: r.count, oldestSeconds: r.oldest }]));
}
