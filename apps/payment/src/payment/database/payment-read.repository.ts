import { EntityManager } from 'typeorm';
import {
  PaymentAttempt,
  PaymentRow,
  Refund,
  RefundRow,
  toPaymentAttempt,
  toRefund,
  updateReturning,
} from './payment.repository';

type Db = Pick<EntityManager, 'query'>;

/** A payment_transition row. */
interface TransitionRow {
  payment_id: string;
  from_state: string;
  to_state: string;
  source: string;
  psp_event_id: string | null;
  detail: string | null;
  created_at: Date;
}

/** One step of an attempt's history (a {@link TransitionRow} in camelCase). */
export interface PaymentTransition {
  paymentId: string;
  fromState: string;
  toState: string;
  source: string;
  pspEventId: string | null;
  detail: string | null;
  createdAt: Date;
}

const toPaymentTransition = (r: TransitionRow): PaymentTransition => ({
  paymentId: r.payment_id,
  fromState: r.from_state,
  toState: r.to_state,
  source: r.source,
  pspEventId: r.psp_event_id,
  detail: r.detail,
  createdAt: r.created_at,
});

/** An orphan_charge row. */
interface OrphanChargeRow {
  psp_charge_id: string;
  reference: string;
  amount: string;
  currency: string;
  action: string;
  detected_at: Date;
}

/** A captured PSP charge without a payment of ours (an {@link OrphanChargeRow} in camelCase). */
export interface OrphanCharge {
  pspChargeId: string;
  reference: string;
  amount: string;
  currency: string;
  action: string;
  detectedAt: Date;
}

const toOrphanCharge = (r: OrphanChargeRow): OrphanCharge => ({
  pspChargeId: r.psp_charge_id,
  reference: r.reference,
  amount: r.amount,
  currency: r.currency,
  action: r.action,
  detectedAt: r.detected_at,
});

/** An order's attempts with their transitions and refunds; every table is read with the tenant, not only the parent. */
export async function findOrderPayments(
  db: Db,
  tenantId: string,
  orderId: string,
): Promise<{ payments: PaymentAttempt[]; history: PaymentTransition[]; refunds: Refund[] }> {
  const payments: PaymentRow[] = await db.query(
    `SELECT * FROM payment_attempt WHERE tenant_id = $1 AND order_id = $2 ORDER BY created_at`,
    [tenantId, orderId],
  );
  if (payments.length === 0) return { payments: [], history: [], refunds: [] };
  const ids = payments.map((p) => p.id);
  const [history, refunds]: [TransitionRow[], RefundRow[]] = await Promise.all([
    db.query(
      `SELECT * FROM payment_transition WHERE tenant_id = $1 AND payment_id = ANY($2::uuid[]) ORDER BY id`,
      [tenantId, ids],
    ),
    db.query(`SELECT * FROM refund WHERE tenant_id = $1 AND payment_id = ANY($2::uuid[])`, [tenantId, ids]),
  ]);
  return {
    payments: payments.map(toPaymentAttempt),
    history: history.map(toPaymentTransition),
    refunds: refunds.map(toRefund),
  };
}

/** The tenant's refunds, newest first, optionally of one state (the operator's `refund_failed` queue). */
export async function listRefunds(db: Db, tenantId: string, state: string | null): Promise<Refund[]> {
  const rows: RefundRow[] = await db.query(
    `SELECT * FROM refund WHERE tenant_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY created_at DESC LIMIT 500`,
    [tenantId, state],
  );
  return rows.map(toRefund);
}

/** Sends a refund in one of `from` back to the retry queue; undefined when it is unknown, foreign or not in `from`. */
export async function requeueRefund(
  db: Db,
  tenantId: string,
  refundId: string,
  from: readonly string[],
): Promise<Refund | undefined> {
  const rows = await updateReturning<RefundRow>(
    db,
    `UPDATE refund SET state = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
      WHERE id = $1 AND tenant_id = $2 AND state = ANY($3::text[]) RETURNING *`,
    [refundId, tenantId, from],
  );
  return rows[0] && toRefund(rows[0]);
}

/** Captured PSP charges the orphan sweep found without a succeeded payment, newest first. */
export async function listOrphanCharges(db: Db, tenantId: string): Promise<OrphanCharge[]> {
  const rows: OrphanChargeRow[] = await db.query(
    `SELECT * FROM orphan_charge WHERE tenant_id = $1 ORDER BY detected_at DESC LIMIT 500`,
    [tenantId],
  );
  return rows.map(toOrphanCharge);
}
