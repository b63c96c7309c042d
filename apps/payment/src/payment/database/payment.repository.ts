import { EntityManager } from 'typeorm';
import { ALLOWED_FROM, PaymentState, TransitionOutcome, TransitionSource } from '../domain/payment-state';
import { RefundState } from '../domain/refund-state';

/** The minimal part of an event we keep to chain causation, correlation and trace of later events. */
export interface StoredCause {
  eventId: string;
  correlationId: string;
  traceparent: string | null;
}

/** A payment_attempt row as the SQL returns it. */
export interface PaymentRow {
  id: string;
  tenant_id: string;
  order_id: string;
  state: PaymentState;
  amount: string;
  currency: string;
  payment_token: string;
  psp_account: string;
  idempotency_key: string;
  psp_ref: string | null;
  failure_reason: string | null;
  refund_on_success: string | null;
  charge_requests: number;
  last_error: string | null;
  cause: StoredCause;
  state_changed_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** A refund row. */
export interface RefundRow {
  id: string;
  tenant_id: string;
  order_id: string;
  payment_id: string | null;
  psp_account: string;
  psp_charge_id: string;
  amount: string;
  currency: string;
  reason: string;
  state: RefundState;
  idempotency_key: string;
  attempts: number;
  last_error: string | null;
  psp_refund_id: string | null;
  cause: StoredCause | null;
  created_at: Date;
  updated_at: Date;
}

/** One requested move of the state machine. */
export interface TransitionRequest {
  paymentId: string;
  tenantId: string;
  to: PaymentState;
  source: TransitionSource;
  /** The PSP charge this news is about; a move is refused if the attempt already knows another charge. */
  pspRef?: string | null;
  failureReason?: string | null;
  pspEventId?: string | null;
  detail?: string | null;
}

/** The result of a move: applied with the row as it is now, or ignored. */
export type TransitionResult =
  { outcome: 'applied'; from: PaymentState; row: PaymentRow } | { outcome: 'ignored'; row: null };

/**
 * The state machine in SQL: one conditional UPDATE (`WHERE id = $1 AND state = ANY($allowed)`), whose row
 * count is the answer, writing its history row in the same statement.
 */
export async function transition(tx: EntityManager, r: TransitionRequest): Promise<TransitionResult> {
  const rows: (PaymentRow & { from_state: PaymentState })[] = await tx.query(
    `WITH old AS (
       SELECT id, state FROM payment_attempt WHERE id = $1 AND tenant_id = $2 FOR UPDATE
     ), moved AS (
       UPDATE payment_attempt p
          SET state = $3, psp_ref = COALESCE(p.psp_ref, $5), failure_reason = COALESCE($6, p.failure_reason),
              state_changed_at = now(), updated_at = now()
         FROM old
        WHERE p.id = old.id AND p.state = ANY($4::text[])
          AND ($5::text IS NULL OR p.psp_ref IS NULL OR p.psp_ref = $5)
       RETURNING p.*, old.state AS from_state
     ), history AS (
       INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source, psp_event_id, detail)
       SELECT id, tenant_id, from_state, state, $7, $8, $9 FROM moved
     )
     SELECT * FROM moved`,
    [
      r.paymentId,
      r.tenantId,
      r.to,
      ALLOWED_FROM[r.to],
      r.pspRef ?? null,
      r.failureReason ?? null,
      r.source,
      r.pspEventId ?? null,
      r.detail ?? null,
    ],
  );
  if (rows.length === 0) return { outcome: 'ignored', row: null };
  const { from_state: from, ...row } = rows[0];
  return { outcome: 'applied' satisfies TransitionOutcome, from, row };
}

/**
 * Claims up to `limit` new attempts for charging (`created -> pending`), never one of a cancelled or refunded
 * order (docs/design/payment.md).
 */
export async function claimNewAttempts(
  q: Pick<EntityManager, 'query'>,
  limit: number,
): Promise<(PaymentRow & { from_state: PaymentState })[]> {
  return q.query(
    `WITH picked AS (
       SELECT id, state FROM payment_attempt a
        WHERE state = ANY($2::text[]) AND refund_on_success IS NULL
          AND NOT EXISTS (SELECT 1 FROM order_cancellation c WHERE c.tenant_id = a.tenant_id AND c.order_id = a.order_id)
        ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED
     ), moved AS (
       UPDATE payment_attempt p SET state = 'pending', state_changed_at = now(), updated_at = now()
         FROM picked
        WHERE p.id = picked.id AND p.state = ANY($2::text[]) AND p.refund_on_success IS NULL
       RETURNING p.*, picked.state AS from_state
     ), history AS (
       INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source, detail)
       SELECT id, tenant_id, from_state, 'pending', 'charge', 'charge requested' FROM moved
     )
     SELECT * FROM moved`,
    [limit, ALLOWED_FROM.pending],
  );
}

/** The attempt of an order. */
export async function findPaymentByOrder(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<PaymentRow | undefined> {
  const rows: PaymentRow[] = await tx.query(
    `SELECT * FROM payment_attempt WHERE tenant_id = $1 AND order_id = $2`,
    [tenantId, orderId],
  );
  return rows[0];
}

/**
 * Records a new attempt in `created` with its first transition: one per order, and none for an order already
 * cancelled (events of two topics may cross). Returns whether it was inserted.
 */
export async function insertAttempt(
  tx: EntityManager,
  a: {
    id: string;
    tenantId: string;
    orderId: string;
    amount: number;
    currency: string;
    paymentToken: string;
    pspAccount: string;
    cause: StoredCause;
  },
): Promise<boolean> {
  const created: unknown[] = await tx.query(
    `INSERT INTO payment_attempt (id, tenant_id, order_id, amount, currency, payment_token, psp_account, idempotency_key, cause)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
        WHERE NOT EXISTS (SELECT 1 FROM order_cancellation WHERE tenant_id = $2 AND order_id = $3)
       ON CONFLICT DO NOTHING RETURNING 1`,
    [
      a.id,
      a.tenantId,
      a.orderId,
      a.amount,
      a.currency,
      a.paymentToken,
      a.pspAccount,
      `pay_${a.id}`,
      JSON.stringify(a.cause),
    ],
  );
  if (created.length !== 1) return false;
  await tx.query(
    `INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source, detail)
       VALUES ($1, $2, 'none', 'created', 'charge', 'inventory reserved')`,
    [a.id, a.tenantId],
  );
  return true;
}

/** Remembers that the order was cancelled, so that a later inventory.reserved records no attempt. */
export async function recordCancellation(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
  reason: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO order_cancellation (tenant_id, order_id, reason) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [tenantId, orderId, reason],
  );
}

/** Marks a payment whose outcome is still open (`openStates`) to be refunded if money arrives; whether it was. */
export async function markRefundOnSuccess(
  tx: EntityManager,
  paymentId: string,
  reason: string,
  openStates: readonly PaymentState[],
): Promise<boolean> {
  const marked = await updateReturning(
    tx,
    `UPDATE payment_attempt SET refund_on_success = COALESCE(refund_on_success, $2), updated_at = now()
      WHERE id = $1 AND state = ANY($3::text[]) RETURNING 1`,
    [paymentId, reason, openStates],
  );
  return marked.length === 1;
}

/** Remembers the PSP's charge id (a pending answer) without moving the state. */
export async function notePspRef(tx: EntityManager, id: string, pspRef: string): Promise<void> {
  await tx.query(
    `UPDATE payment_attempt SET psp_ref = COALESCE(psp_ref, $2), updated_at = now() WHERE id = $1`,
    [id, pspRef],
  );
}

/** Records why the last PSP call did not give an answer. */
export async function noteError(tx: EntityManager, id: string, error: string | null): Promise<void> {
  await tx.query(`UPDATE payment_attempt SET last_error = $2, updated_at = now() WHERE id = $1`, [
    id,
    error?.slice(0, 500) ?? null,
  ]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a uuid (PSP metadata is free text: check before casting). */
export const isUuid = (s: string | undefined | null): s is string => typeof s === 'string' && UUID.test(s);

/** Inserts a refund request for a charge, once: a second request for the same charge does nothing. */
export async function insertRefund(
  tx: EntityManager,
  r: {
    id: string;
    tenantId: string;
    orderId: string;
    paymentId: string | null;
    pspAccount: string;
    pspChargeId: string;
    amount: number;
    currency: string;
    reason: string;
    cause: StoredCause | null;
  },
): Promise<boolean> {
  const rows: unknown[] = await tx.query(
    `INSERT INTO refund (id, tenant_id, order_id, payment_id, psp_account, psp_charge_id, amount, currency, reason,
                         idempotency_key, cause)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [
      r.id,
      r.tenantId,
      r.orderId,
      r.paymentId,
      r.pspAccount,
      r.pspChargeId,
      r.amount,
      r.currency,
      r.reason.slice(0, 255),
      `refund:${r.id}`,
      r.cause ? JSON.stringify(r.cause) : null,
    ],
  );
  return rows.length === 1;
}

/** Rows of an `UPDATE ... RETURNING` (TypeORM answers UPDATE and DELETE with `[rows, rowCount]`). */
export async function updateReturning<T>(
  q: Pick<EntityManager, 'query'>,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  const result: unknown = await q.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  )
    return result[0] as T[];
  return result as T[];
}
