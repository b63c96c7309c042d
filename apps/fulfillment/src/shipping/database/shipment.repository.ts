import { EntityManager } from 'typeorm';
import { ShipmentLine, ShipmentStatus } from '../domain';
import { lockSaga, sql } from '@checkout/messaging';

/** A shipment as stored and as the HTTP API shows it. */
export interface ShipmentRow {
  shipmentId: string;
  orderId: string;
  customerId: string;
  status: ShipmentStatus;
  carrier: string;
  trackingNumber: string | null;
  lines: ShipmentLine[];
  failureReason: string | null;
  cancelReason: string | null;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
}

/** What a new shipment row holds. */
export interface NewShipment {
  id: string;
  tenantId: string;
  orderId: string;
  customerId: string;
  status: 'created' | 'failed';
  carrier: string;
  trackingNumber: string | null;
  failureReason: string | null;
  lines: readonly ShipmentLine[];
}

const COLUMNS = `id AS "shipmentId", order_id AS "orderId", customer_id AS "customerId", status, carrier,
  tracking_number AS "trackingNumber", lines, failure_reason AS "failureReason", cancel_reason AS "cancelReason",
  created_at AS "createdAt", updated_at AS "updatedAt", cancelled_at AS "cancelledAt"`;

/** Inserts the order's shipment unless it has one; true when this call inserted it. */
export async function insertShipment(tx: EntityManager, s: NewShipment): Promise<boolean> {
  const { rowCount } = await sql(
    tx,
    `INSERT INTO shipment (id, tenant_id, order_id, customer_id, status, carrier, tracking_number, failure_reason, lines)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
     ON CONFLICT (tenant_id, order_id) DO NOTHING
     RETURNING id`,
    [
      s.id,
      s.tenantId,
      s.orderId,
      s.customerId,
      s.status,
      s.carrier,
      s.trackingNumber,
      s.failureReason,
      JSON.stringify(s.lines),
    ],
  );
  return rowCount === 1;
}

/** Moves the order's booked shipment to cancelled (conditional update); null when there was none to cancel. */
export async function cancelShipment(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
  reason: string,
): Promise<ShipmentRow | null> {
  const { rows } = await sql<ShipmentRow>(
    tx,
    `UPDATE shipment SET status = 'cancelled', cancel_reason = $3, cancelled_at = now(), updated_at = now()
      WHERE tenant_id = $1 AND order_id = $2 AND status = ANY($4::text[])
     RETURNING ${COLUMNS}`,
    [tenantId, orderId, reason, ['created']],
  );
  return rows[0] ?? null;
}

/** Records that the order was refunded, so that a late order.paid never books a shipment for it. */
export async function markOrderRefunded(tx: EntityManager, tenantId: string, orderId: string): Promise<void> {
  await sql(
    tx,
    `INSERT INTO fulfillment_order (tenant_id, order_id, refunded_at) VALUES ($1, $2, now())
     ON CONFLICT (tenant_id, order_id)
     DO UPDATE SET refunded_at = COALESCE(fulfillment_order.refunded_at, now()), updated_at = now()`,
    [tenantId, orderId],
  );
}

/** Whether payment.refunded was already seen for the order. */
export async function isOrderRefunded(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<boolean> {
  const { rows } = await sql(
    tx,
    `SELECT 1 FROM fulfillment_order WHERE tenant_id = $1 AND order_id = $2 AND refunded_at IS NOT NULL`,
    [tenantId, orderId],
  );
  return rows.length > 0;
}

/** The tenant's shipments of one order (at most one today), as the HTTP API answers them. */
export async function shipmentsOfOrder(
  q: Pick<EntityManager, 'query'>,
  tenantId: string,
  orderId: string,
): Promise<ShipmentRow[]> {
  return q.query(
    `SELECT ${COLUMNS} FROM shipment WHERE tenant_id = $1 AND order_id = $2 ORDER BY created_at`,
    [tenantId, orderId],
  );
}

/**
 * Serialises every change of one order's fulfillment state (order.paid against payment.refunded arriving
 * on different partitions at once) until the transaction ends.
 */
export const lockOrder = (tx: EntityManager, tenantId: string, orderId: string): Promise<void> =>
  lockSaga(tx, tenantId, orderId);

/** Shipments per tenant and status (the fulfillment_shipments gauge). */
export async function shipmentCounts(
  q: Pick<EntityManager, 'query'>,
): Promise<{ tenantId: string; status: string; count: number }[]> {
  const rows: { tenant_id: string; status: string; count: number }[] = await q.query(
    `SELECT tenant_id, status, count(*)::int AS count FROM shipment GROUP BY tenant_id, status`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, status: r.status, count: r.count }));
}
