import { Injectable } from '@nestjs/common';
import { Sql } from '../../database';
import {
  CANCEL_BLOCKING_PAYMENTS,
  ORDER_TRANSITIONS,
  OrderStatus,
  PAYMENT_TRANSITIONS,
  PaymentState,
} from '../domain/order-status';
import { PricedSnapshot } from '../domain/order-snapshot';

/** What checkout snapshots of an order: who, what, at which prices, and its gate hold. */
interface OrderSnapshot extends PricedSnapshot {
  id: string;
  tenantId: string;
  gateHoldId: string | null;
}

/** A new order as checkout snapshots it. */
export interface NewOrder extends OrderSnapshot {
  paymentToken: string;
  idempotencyKey: string;
}

/** An order row with its lines. */
export interface OrderRecord extends OrderSnapshot {
  status: OrderStatus;
  paymentState: PaymentState | null;
  paymentId: string | null;
  pspReference: string | null;
  paidAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One status change of an order. */
export interface HistoryEntry {
  from: OrderStatus | null;
  to: OrderStatus;
  cause: string;
  eventId: string | null;
  at: string;
}

/** The row a transition statement returns when the order moved. */
interface MovedRow {
  from_status: OrderStatus;
  payment_state: PaymentState | null;
  gate_hold_id: string | null;
}

/** What a transition found: the status it moved from, and the row after the move. */
export interface Moved {
  from: OrderStatus;
  paymentState: PaymentState | null;
  gateHoldId: string | null;
}

/** Orders, their lines and history; every status change a conditional update. */
@Injectable()
export class OrderRepository {
  /**
   * Inserts the order (PENDING), its lines and the first history row, in one statement: one round trip of
   * the checkout transaction instead of three.
   */
  async insert(tx: Sql, o: NewOrder): Promise<void> {
    await tx.query(
      `WITH o AS (
         INSERT INTO orders (id, tenant_id, customer_id, currency, subtotal, discount, total, voucher_code, payment_token,
                             status, gate_hold_id, idempotency_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', $10, $11)
         RETURNING id, tenant_id),
       l AS (
         INSERT INTO order_lines (order_id, line_no, tenant_id, sku, quantity, unit_price, discount, line_total)
         SELECT o.id, l.n, o.tenant_id, l.sku, l.quantity, l.unit_price, l.discount, l.line_total
           FROM o, unnest($12::text[], $13::int[], $14::bigint[], $15::bigint[], $16::bigint[]) WITH ORDINALITY
                AS l(sku, quantity, unit_price, discount, line_total, n))
       INSERT INTO order_history (order_id, tenant_id, from_status, to_status, cause)
       SELECT o.id, o.tenant_id, NULL, 'PENDING', 'checkout' FROM o`,
      [
        o.id,
        o.tenantId,
        o.customerId,
        o.currency,
        o.subtotal,
        o.discount,
        o.total,
        o.voucherCode,
        o.paymentToken,
        o.gateHoldId,
        o.idempotencyKey,
        o.lines.map((l) => l.sku),
        o.lines.map((l) => l.quantity),
        o.lines.map((l) => l.unitPrice),
        o.lines.map((l) => l.discount),
        o.lines.map((l) => l.lineTotal),
      ],
    );
  }

  /**
   * Moves the order to `to` only from the statuses the state machine allows (and, for PAID, only when money
   * and stock are both there), recording a history row in the same statement. Null when the order is elsewhere:
   * nothing changed.
   */
  async transition(
    tx: Sql,
    tenantId: string,
    orderId: string,
    to: Exclude<OrderStatus, 'PENDING'>,
    cause: string,
    eventId: string | null,
  ): Promise<Moved | null> {
    const guard = to === 'PAID' ? `AND o.payment_state = 'succeeded' AND o.stock_committed` : '';
    const rows: MovedRow[] = await tx.query(
      `WITH prev AS (SELECT id, status FROM orders WHERE id = $1 AND tenant_id = $2 FOR UPDATE),
         moved AS (
           UPDATE orders o SET status = $3, updated_at = now()
             FROM prev
            WHERE o.id = prev.id AND prev.status = ANY($4::text[]) ${guard}
           RETURNING o.id, o.tenant_id, prev.status AS from_status, o.payment_state, o.gate_hold_id),
         h AS (
           INSERT INTO order_history (order_id, tenant_id, from_status, to_status, cause, event_id)
           SELECT id, tenant_id, from_status, $3, $5, $6 FROM moved)
         SELECT from_status, payment_state, gate_hold_id FROM moved`,
      [orderId, tenantId, to, ORDER_TRANSITIONS[to], cause, eventId],
    );
    return movedOf(rows);
  }

  /** The customer's cancel: a transition to CANCELLED that also requires the payment not to have succeeded. */
  async cancelByCustomer(tx: Sql, tenantId: string, orderId: string): Promise<Moved | null> {
    const rows: MovedRow[] = await tx.query(
      `WITH prev AS (SELECT id, status FROM orders WHERE id = $1 AND tenant_id = $2 FOR UPDATE),
         moved AS (
           UPDATE orders o SET status = 'CANCELLED', updated_at = now()
             FROM prev
            WHERE o.id = prev.id AND prev.status = ANY($3::text[])
              AND (o.payment_state IS NULL OR o.payment_state <> ALL($4::text[]))
           RETURNING o.id, o.tenant_id, prev.status AS from_status, o.payment_state, o.gate_hold_id),
         h AS (
           INSERT INTO order_history (order_id, tenant_id, from_status, to_status, cause)
           SELECT id, tenant_id, from_status, 'CANCELLED', 'customer_request' FROM moved)
         SELECT from_status, payment_state, gate_hold_id FROM moved`,
      [orderId, tenantId, ORDER_TRANSITIONS.CANCELLED, CANCEL_BLOCKING_PAYMENTS],
    );
    return movedOf(rows);
  }

  /**
   * Moves the mirrored payment state forward (never back). Returns whether both halves of PAID (the money and the
   * stock) are now recorded, or null when nothing moved.
   */
  async movePayment(
    tx: Sql,
    tenantId: string,
    orderId: string,
    to: PaymentState,
    details: { paymentId?: string; pspReference?: string | null; paidAt?: string } = {},
  ): Promise<boolean | null> {
    const allowed = PAYMENT_TRANSITIONS[to].filter((s): s is PaymentState => s !== null);
    const rows: { paid_ready: boolean }[] = await tx.query(
      `WITH moved AS (
         UPDATE orders SET payment_state = $3, payment_id = COALESCE($4, payment_id), psp_reference = COALESCE($5, psp_reference),
                           paid_at = COALESCE($6, paid_at), updated_at = now()
          WHERE id = $1 AND tenant_id = $2 AND (payment_state IS NULL OR payment_state = ANY($7::text[]))
          RETURNING payment_state = 'succeeded' AND stock_committed AS paid_ready)
       SELECT paid_ready FROM moved`,
      [
        orderId,
        tenantId,
        to,
        details.paymentId ?? null,
        details.pspReference ?? null,
        details.paidAt ?? null,
        allowed,
      ],
    );
    return rows[0]?.paid_ready ?? null;
  }

  /**
   * Records that inventory moved the order's units to sold. Returns whether both halves of PAID are now recorded,
   * or null when nothing changed (already recorded, or no such order).
   */
  async markStockCommitted(tx: Sql, tenantId: string, orderId: string): Promise<boolean | null> {
    const rows: { paid_ready: boolean }[] = await tx.query(
      `WITH committed AS (
         UPDATE orders SET stock_committed = true, updated_at = now()
          WHERE id = $1 AND tenant_id = $2 AND NOT stock_committed
          RETURNING payment_state = 'succeeded' AS paid_ready)
       SELECT paid_ready FROM committed`,
      [orderId, tenantId],
    );
    return rows[0]?.paid_ready ?? null;
  }

  /** The gate hold of an order (null: it took none), or undefined for an unknown or foreign order. */
  async gateHoldOf(db: Sql, tenantId: string, orderId: string): Promise<string | null | undefined> {
    const [o] = await db.query(`SELECT gate_hold_id FROM orders WHERE id = $1 AND tenant_id = $2`, [
      orderId,
      tenantId,
    ]);
    return o ? (o.gate_hold_id as string | null) : undefined;
  }

  /** The order with its lines (one statement), tenant-scoped; undefined for an unknown or foreign order. */
  async find(db: Sql, tenantId: string, orderId: string): Promise<OrderRecord | undefined> {
    const [o] = await db.query(
      `SELECT o.*,
              (SELECT coalesce(json_agg(json_build_object('sku', l.sku, 'quantity', l.quantity, 'unit_price', l.unit_price,
                                                          'discount', l.discount, 'line_total', l.line_total)
                                        ORDER BY l.line_no), '[]')
                 FROM order_lines l WHERE l.order_id = o.id AND l.tenant_id = o.tenant_id) AS lines
         FROM orders o WHERE o.id = $1 AND o.tenant_id = $2`,
      [orderId, tenantId],
    );
    if (!o) return undefined;
    const lines = o.lines as {
      sku: string;
      quantity: number;
      unit_price: number | string;
      discount: number | string;
      line_total: number | string;
    }[];
    return {
      id: o.id,
      tenantId: o.tenant_id,
      customerId: o.customer_id,
      currency: o.currency,
      lines: lines.map((l) => ({
        sku: l.sku,
        quantity: l.quantity,
        unitPrice: Number(l.unit_price),
        discount: Number(l.discount),
        lineTotal: Number(l.line_total),
      })),
      subtotal: Number(o.subtotal),
      discount: Number(o.discount),
      total: Number(o.total),
      voucherCode: o.voucher_code,
      status: o.status,
      paymentState: o.payment_state,
      paymentId: o.payment_id,
      pspReference: o.psp_reference,
      paidAt: o.paid_at ? (o.paid_at as Date).toISOString() : null,
      gateHoldId: o.gate_hold_id,
      createdAt: (o.created_at as Date).toISOString(),
      updatedAt: (o.updated_at as Date).toISOString(),
    };
  }

  /** The order's status changes, oldest first, tenant-scoped. */
  async history(db: Sql, tenantId: string, orderId: string): Promise<HistoryEntry[]> {
    const rows: {
      from_status: OrderStatus | null;
      to_status: OrderStatus;
      cause: string;
      event_id: string | null;
      at: Date;
    }[] = await db.query(
      `SELECT from_status, to_status, cause, event_id, at FROM order_history WHERE order_id = $1 AND tenant_id = $2 ORDER BY id`,
      [orderId, tenantId],
    );
    return rows.map((r) => ({
      from: r.from_status,
      to: r.to_status,
      cause: r.cause,
      eventId: r.event_id,
      at: r.at.toISOString(),
    }));
  }
}

/** What a transition statement returned: the move, or null when the order did not move. */
function movedOf(rows: MovedRow[]): Moved | null {
  if (rows.length === 0) return null;
  return { from: rows[0].from_status, paymentState: rows[0].payment_state, gateHoldId: rows[0].gate_hold_id };
}
