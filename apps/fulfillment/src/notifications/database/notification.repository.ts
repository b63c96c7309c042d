import { EntityManager } from 'typeorm';
import { lockSaga, sql } from '@checkout/messaging';
import { NotificationKind } from '../domain';

/** Serialises every change of one order's notifications (events of one order on different partitions). */
const lockOrder = (tx: EntityManager, tenantId: string, orderId: string): Promise<void> =>
  lockSaga(tx, tenantId, orderId);

/** What a notification says, to whom, about which order. */
export interface NotificationContent {
  orderId: string;
  kind: NotificationKind;
  customerId: string | null;
  subject: string;
  body: string;
  voucherCode: string | null;
}

/** A notification as stored and as the HTTP API shows it. */
export interface NotificationRow extends NotificationContent {
  notificationId: string;
  status: 'pending' | 'sent';
  createdAt: string;
  sentAt: string | null;
}

/** What a new notification holds; customerId is null while fulfillment has not yet seen the order. */
export interface NewNotification extends NotificationContent {
  id: string;
  tenantId: string;
  causeEventId: string;
}

/** A notification the notifier leased for sending. */
export interface ClaimedNotification extends NotificationRow {
  tenantId: string;
  customerId: string;
}

const COLUMNS = `id AS "notificationId", order_id AS "orderId", kind, customer_id AS "customerId", subject, body,
  voucher_code AS "voucherCode", status, created_at AS "createdAt", sent_at AS "sentAt"`;

/** Inserts the order's notification of this kind unless it has one; true when this call inserted it. */
export async function insertNotification(tx: EntityManager, n: NewNotification): Promise<boolean> {
  const { rowCount } = await sql(
    tx,
    `INSERT INTO notification (id, tenant_id, order_id, kind, customer_id, subject, body, voucher_code, cause_event_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (tenant_id, order_id, kind) DO NOTHING
     RETURNING id`,
    [n.id, n.tenantId, n.orderId, n.kind, n.customerId, n.subject, n.body, n.voucherCode, n.causeEventId],
  );
  return rowCount === 1;
}

/**
 * Remembers the order's customer and gives it to the order's notifications still without a recipient. Takes
 * the order's lock, as customerOf's callers do, so that an email queued concurrently is never left behind.
 */
export async function rememberCustomer(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
  customerId: string,
): Promise<void> {
  await lockOrder(tx, tenantId, orderId);
  // One statement: the two tables are independent, and the lock above (an earlier statement) is what makes the
  // notifications queued before it visible here.
  await sql(
    tx,
    `WITH remembered AS (
       INSERT INTO fulfillment_order (tenant_id, order_id, customer_id) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, order_id)
       DO UPDATE SET customer_id = COALESCE(fulfillment_order.customer_id, EXCLUDED.customer_id), updated_at = now())
     UPDATE notification SET customer_id = $3 WHERE tenant_id = $1 AND order_id = $2 AND customer_id IS NULL`,
    [tenantId, orderId, customerId],
  );
}

/** The order's customer, if fulfillment has seen order.created or order.paid for it; takes the order's lock. */
export async function customerOf(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<string | null> {
  await lockOrder(tx, tenantId, orderId);
  const { rows } = await sql<{ customer_id: string | null }>(
    tx,
    `SELECT customer_id FROM fulfillment_order WHERE tenant_id = $1 AND order_id = $2`,
    [tenantId, orderId],
  );
  return rows[0]?.customer_id ?? null;
}

/**
 * Leases up to `limit` pending notifications with a known recipient for `leaseMs`, oldest first, in one
 * statement (SKIP LOCKED: concurrent notifiers take different rows). A crashed pass's lease simply runs out.
 */
export async function claimPending(
  q: Pick<EntityManager, 'query'>,
  limit: number,
  leaseMs: number,
): Promise<ClaimedNotification[]> {
  const [rows]: [ClaimedNotification[], number] = await q.query(
    `UPDATE notification n SET claimed_until = now() + make_interval(secs => $2::float8 / 1000),
            attempts = n.attempts + 1
       FROM (SELECT id FROM notification
              WHERE status = 'pending' AND customer_id IS NOT NULL
                AND (claimed_until IS NULL OR claimed_until < now())
              ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED) c
      WHERE n.id = c.id
     RETURNING n.tenant_id AS "tenantId", n.id AS "notificationId", n.order_id AS "orderId", n.kind,
               n.customer_id AS "customerId", n.subject, n.body, n.voucher_code AS "voucherCode", n.status,
               n.created_at AS "createdAt", n.sent_at AS "sentAt"`,
    [limit, leaseMs],
  );
  return rows;
}

/** Records a notification as sent (conditional: only a pending one); true when this call recorded it. */
export async function markSent(q: Pick<EntityManager, 'query'>, id: string): Promise<boolean> {
  const [, affected]: [unknown[], number] = await q.query(
    `UPDATE notification SET status = 'sent', sent_at = now(), claimed_until = NULL
      WHERE id = $1 AND status = 'pending'`,
    [id],
  );
  return affected === 1;
}

/** The tenant's notifications of one order, oldest first, as the HTTP API answers them. */
export async function notificationsOfOrder(
  q: Pick<EntityManager, 'query'>,
  tenantId: string,
  orderId: string,
): Promise<NotificationRow[]> {
  return q.query(
    `SELECT ${COLUMNS} FROM notification WHERE tenant_id = $1 AND order_id = $2 ORDER BY created_at, kind`,
    [tenantId, orderId],
  );
}

/** Notifications per tenant, kind and status (the fulfillment_notifications gauge). */
export async function notificationCounts(
  q: Pick<EntityManager, 'query'>,
): Promise<{ tenantId: string; kind: string; status: string; count: number }[]> {
  const rows: { tenant_id: string; kind: string; status: string; count: number }[] = await q.query(
    `SELECT tenant_id, kind, status, count(*)::int AS count FROM notification GROUP BY tenant_id, kind, status`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, kind: r.kind, status: r.status, count: r.count }));
}
