import { DataSource, EntityManager } from 'typeorm';
import { Line, LineSettlement, SOLD_SETTLEMENTS, StockCounters } from '../domain';
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

/**
 * Milliseconds until the earliest held reservation of these tenants expires (<= 0: one is due now), or null when
 * none is held: what the expiry job sleeps for (the partial index of held reservations, per tenant).
 */
export async function nextReservationDueMs(db: DataSource, tenantIds: string[]): Promise<number | null> {
  const [{ due }]: { due: string | null }[] = await db.query(
    `SELECT EXTRACT(EPOCH FROM min(expires_at) - now()) * 1000 AS due
       FROM reservation WHERE status = 'held' AND tenant_id = ANY($1::text[])`,
    [tenantIds],
  );
  return due === null ? null : Math.ceil(Number(due));
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

/** A reservation row's state: held (units in reserved), committed (sold) or released (back to available). */
export type ReservationStatus = 'held' | 'committed' | 'released';

/** What a payment did to one reservation line (stamped once; a second payment.succeeded finds it set). */
export type PaymentOutcome = Exclude<LineSettlement, 'short'> | 'backordered' | 'unavailable';

/** One reservation line of an order as the payment's settlement sees it. */
export interface OrderReservationLine {
  sku: string;
  qty: number;
  status: ReservationStatus;
  releaseReason: ReleaseReason | null;
  paymentOutcome: PaymentOutcome | null;
}

/** The order's reservation lines, locked FOR UPDATE in SKU order (a concurrent release of the order waits). */
export async function lockOrderReservations(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<OrderReservationLine[]> {
  const { rows } = await sql<{
    sku: string;
    qty: number;
    status: ReservationStatus;
    release_reason: ReleaseReason | null;
    payment_outcome: PaymentOutcome | null;
  }>(
    tx,
    `SELECT sku, qty, status, release_reason, payment_outcome FROM reservation
        WHERE tenant_id = $1 AND order_id = $2 ORDER BY sku FOR UPDATE`,
    [tenantId, orderId],
  );
  return rows.map((r) => ({
    sku: r.sku,
    qty: r.qty,
    status: r.status,
    releaseReason: r.release_reason,
    paymentOutcome: r.payment_outcome,
  }));
}

/** Stamps each line with the payment's outcome (only lines not stamped yet); sold lines become committed. */
export async function stampPaymentOutcome(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
  outcomes: { sku: string; outcome: PaymentOutcome }[],
): Promise<void> {
  await sql(
    tx,
    `UPDATE reservation r
          SET payment_outcome = o.outcome,
              status = CASE WHEN o.outcome = ANY($5::text[]) THEN 'committed' ELSE r.status END,
              updated_at = now()
         FROM unnest($3::text[], $4::text[]) AS o(sku, outcome)
        WHERE r.tenant_id = $1 AND r.order_id = $2 AND r.sku = o.sku AND r.payment_outcome IS NULL`,
    [tenantId, orderId, outcomes.map((o) => o.sku), outcomes.map((o) => o.outcome), SOLD_SETTLEMENTS],
  );
}

/** Records the units owed to a paid order, one open backorder row per line. */
export async function insertBackorders(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
  lines: Line[],
): Promise<void> {
  await sql(
    tx,
    `INSERT INTO backorder (tenant_id, order_id, sku, qty)
         SELECT $1, $2, b.sku, b.qty FROM unnest($3::text[], $4::int[]) AS b(sku, qty)`,
    [tenantId, orderId, lines.map((b) => b.sku), lines.map((b) => b.quantity)],
  );
}

/**
 * One statement: the SKU's open backorders are locked oldest first and filled in that order as long as the
 * available units cover them (strict first come, first served: a big old backorder is not overtaken by a
 * later small one). Filled units move available -> sold with a conditional UPDATE judged by its row count,
 * and the order's reservation line (released, payment_outcome backordered) becomes committed, so the ledger
 * of `sold` (committed, not returned reservations) keeps matching the counter.
 */
const FILL_BACKORDERS = `
  WITH locked AS (
    SELECT order_id, qty, created_at FROM backorder
     WHERE tenant_id = $1 AND sku = $2 AND status = 'open'
     ORDER BY created_at, order_id FOR UPDATE),
  queue AS (
    SELECT order_id, qty, sum(qty) OVER (ORDER BY created_at, order_id) AS running FROM locked),
  filled AS (
    UPDATE backorder b SET status = 'fulfilled', updated_at = now()
      FROM queue q, stock s
     WHERE b.tenant_id = $1 AND b.sku = $2 AND b.order_id = q.order_id AND b.status = 'open'
       AND s.tenant_id = $1 AND s.sku = $2 AND q.running <= s.available
    RETURNING b.order_id, b.qty, b.created_at),
  total AS (SELECT coalesce(sum(qty), 0)::int AS units, count(*)::int AS lines FROM filled),
  taken AS (
    UPDATE stock s SET available = s.available - t.units, sold = s.sold + t.units, updated_at = now()
      FROM total t
     WHERE s.tenant_id = $1 AND s.sku = $2 AND t.units > 0 AND s.available >= t.units
    RETURNING 1),
  ledger AS (
    UPDATE reservation r SET status = 'committed', updated_at = now()
      FROM filled f
     WHERE r.tenant_id = $1 AND r.sku = $2 AND r.order_id = f.order_id
       AND r.status = 'released' AND r.payment_outcome = 'backordered'
    RETURNING r.order_id)
  SELECT f.order_id AS "orderId", f.qty AS quantity,
         (SELECT units FROM total) AS units, (SELECT count(*) FROM taken)::int AS taken,
         (SELECT count(*) FROM ledger)::int AS ledger
    FROM filled f ORDER BY f.created_at, f.order_id`;

/** Fills the SKU's open backorders oldest first from available (see FILL_BACKORDERS); the lines filled, in order. */
export async function fillBackorders(
  tx: EntityManager,
  tenantId: string,
  sku: string,
): Promise<{ orderId: string; quantity: number }[]> {
  const { rows } = await sql<{
    orderId: string;
    quantity: number;
    units: number;
    taken: number;
    ledger: number;
  }>(tx, FILL_BACKORDERS, [tenantId, sku]);
  if (rows.length === 0) return [];
  // Under the locks the queue and the conditional UPDATE see the same units: a mismatch is a bug, and
  // throwing rolls the restock back rather than selling units the counter does not show.
  if (rows[0].taken !== 1 || rows[0].ledger !== rows.length) {
    throw new Error(
      `backorder fill of ${sku}: ${rows.length} lines, stock moved ${rows[0].taken}, ledger ${rows[0].ledger}`,
    );
  }
  return rows.map(({ orderId, quantity }) => ({ orderId, quantity }));
}

/** Of these orders, those with every backorder line fulfilled, with their backordered lines (by order id). */
export async function fulfilledBackorders(
  tx: EntityManager,
  tenantId: string,
  orderIds: string[],
): Promise<{ orderId: string; lines: Line[] }[]> {
  const { rows } = await sql<{ orderId: string; lines: Line[] }>(
    tx,
    `SELECT order_id AS "orderId",
              jsonb_agg(jsonb_build_object('sku', sku, 'quantity', qty) ORDER BY sku) AS lines
         FROM backorder
        WHERE tenant_id = $1 AND order_id = ANY($2::uuid[])
        GROUP BY order_id
       HAVING bool_and(status = 'fulfilled')
        ORDER BY order_id`,
    [tenantId, orderIds],
  );
  return rows;
}

/** Marks the order's committed lines not yet returned as returned (once each); returns them by SKU. */
export async function markSoldReturned(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<Line[]> {
  const { rows } = await sql<{ sku: string; qty: number }>(
    tx,
    `WITH returned AS (
         UPDATE reservation SET returned_at = now(), updated_at = now()
          WHERE tenant_id = $1 AND order_id = $2 AND status = 'committed' AND returned_at IS NULL
         RETURNING sku, qty)
       SELECT sku, qty FROM returned ORDER BY sku`,
    [tenantId, orderId],
  );
  return rows.map((r) => ({ sku: r.sku, quantity: r.qty }));
}

/** Cancels the order's open backorders (its shipment failed: nothing is owed any more). */
export async function cancelOpenBackorders(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<void> {
  await sql(
    tx,
    `UPDATE backorder SET status = 'cancelled', updated_at = now()
        WHERE tenant_id = $1 AND order_id = $2 AND status = 'open'`,
    [tenantId, orderId],
  );
}

/** A SKU's stored counters beside the same totals recomputed from its ledgers. */
export interface SkuLedger extends StockCounters {
  sku: string;
  /** Sum of the SKU's restock deltas. */
  ledgerRestocked: number;
  /** Units of its held reservations. */
  held: number;
  /** Units of its committed reservations not returned. */
  ledgerSold: number;
}

/** Every SKU of the tenant (or these SKUs) with its counters and ledger totals, by SKU, in the caller's snapshot. */
export async function skuLedgers(tx: EntityManager, tenantId: string, skus?: string[]): Promise<SkuLedger[]> {
  const { rows } = await sql<SkuLedger>(
    tx,
    `SELECT s.sku, s.available, s.reserved, s.sold, s.restocked::int AS restocked,
                COALESCE((SELECT sum(delta) FROM stock_restock r
                           WHERE r.tenant_id = s.tenant_id AND r.sku = s.sku), 0)::int AS "ledgerRestocked",
                COALESCE((SELECT sum(qty) FROM reservation v
                           WHERE v.tenant_id = s.tenant_id AND v.sku = s.sku AND v.status = 'held'), 0)::int AS held,
                COALESCE((SELECT sum(qty) FROM reservation v
                           WHERE v.tenant_id = s.tenant_id AND v.sku = s.sku AND v.status = 'committed'
                             AND v.returned_at IS NULL), 0)::int AS "ledgerSold"
           FROM stock s
          WHERE s.tenant_id = $1 AND ($2::text[] IS NULL OR s.sku = ANY($2))
          ORDER BY s.sku`,
    [tenantId, skus ?? null],
  );
  return rows;
}

/**
 * Rewrites a SKU's counters to `expected` only if available, reserved and sold are still `actual` (a writer
 * in between makes it a no-op); whether it was rewritten.
 */
export async function rewriteCounters(
  tx: EntityManager,
  tenantId: string,
  sku: string,
  expected: StockCounters,
  actual: StockCounters,
): Promise<boolean> {
  const { rowCount } = await sql(
    tx,
    `UPDATE stock SET available = $3, reserved = $4, sold = $5, restocked = $6, updated_at = now()
              WHERE tenant_id = $1 AND sku = $2 AND available = $7 AND reserved = $8 AND sold = $9`,
    [
      tenantId,
      sku,
      expected.available,
      expected.reserved,
      expected.sold,
      expected.restocked,
      actual.available,
      actual.reserved,
      actual.sold,
    ],
  );
  return rowCount === 1;
}
