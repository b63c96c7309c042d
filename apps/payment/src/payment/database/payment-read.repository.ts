import { EntityManager } from 'typeorm';
import { PaymentRow, RefundRow, updateReturning } from './payment.repository';

type Db = Pick<EntityManager, 'query'>;

/** A payment_transition row. */
export interface TransitionRow {
  payment_id: string;
  from_state: string;
  to_state: string;
  source: string;
  psp_event_id: string | null;
  detail: string | null;
  created_at: Date;
}

/** An orphan_charge row. */
export interface OrphanChargeRow {
  psp_charge_id: string;
  reference: string;
  amount: string;
  currency: string;
  action: string;
  detected_at: Date;
}

/** An order's attempts with their transitions and refunds; every table is read with the tenant, not only the parent. */
export async function findOrderPayments(
  db: Db,
  tenantId: string,
  orderId: string,
): Promise<{ payments: PaymentRow[]; history: TransitionRow[]; refunds: RefundRow[] }> {
  const payments: PaymentRow[] = await db.query(
    `SELECT * FROM payment_attempt WHERE tenant_id = $1 AND order_id = $2 ORDER BY created_at`,
    [tenantId, orderId],
  );
  if (payments.length === 0) return { payments, history: [], refunds: [] };
  const ids = payments.map((p) => p.id);
  const [history, refunds]: [TransitionRow[], RefundRow[]] = await Promise.all([
    db.query(
      `SELECT * FROM payment_transition WHERE tenant_id = $1 AND payment_id = ANY($2::uuid[]) ORDER BY id`,
      [tenantId, ids],
    ),
    db.query(`SELECT * FROM refund WHERE tenant_id = $1 AND payment_id = ANY($2::uuid[])`, [tenantId, ids]),
  ]);
  return { payments, history, refunds };
}

/** The tenant's refunds, newest first, optionally of one state (the operator's `refund_failed` queue). */
export function listRefunds(db: Db, tenantId: string, state: string | null): Promise<RefundRow[]> {
  return db.query(
    `SELECT * FROM refund WHERE tenant_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY created_at DESC LIMIT 500`,
    [tenantId, state],
  );
}

/** Sends a refund in one of `from` back to the retry queue; undefined when it is unknown, foreign or not in `from`. */
export async function requeueRefund(
  db: Db,
  tenantId: string,
  refundId: string,
  from: readonly string[],
): Promise<RefundRow | undefined> {
  const rows = await updateReturning<RefundRow>(
    db,
    `UPDATE refund SET state = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
      WHERE id = $1 AND tenant_id = $2 AND state = ANY($3::text[]) RETURNING *`,
    [refundId, tenantId, from],
  );
  return rows[0];
}

/** Captured PSP charges the orphan sweep found without a succeeded payment, newest first. */
export function listOrphanCharges(db: Db, tenantId: string): Promise<OrphanChargeRow[]> {
  return db.query(`SELECT * FROM orphan_charge WHERE tenant_id = $1 ORDER BY detected_at DESC LIMIT 500`, [
    tenantId,
  ]);
}
