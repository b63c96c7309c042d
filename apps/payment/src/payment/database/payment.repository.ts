import { EntityManager } from 'typeorm';
import { wakeOnCommit } from '@checkout/service-kit';
import {
  ALLOWED_FROM,
  AWAITING_PSP_STATES,
  CAPTURED_STATES,
  OPEN_STATES,
  PaymentState,
  TransitionOutcome,
  TransitionSource,
} from '../domain/payment-state';
import { REFUND_ALLOWED_FROM, RefundState } from '../domain/refund-state';

/** The minimal part of an event we keep to chain causation, correlation and trace of later events. */
export interface StoredCause {
  eventId: string;
  correlationId: string;
  traceparent: string | null;
}

/** A payment_attempt row as the SQL returns it (only database/ sees it: the rest gets a {@link PaymentAttempt}). */
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

/** A payment attempt as commands, jobs and controllers see it (a {@link PaymentRow} in camelCase). */
export interface PaymentAttempt {
  id: string;
  tenantId: string;
  orderId: string;
  state: PaymentState;
  amount: string;
  currency: string;
  paymentToken: string;
  pspAccount: string;
  idempotencyKey: string;
  pspRef: string | null;
  failureReason: string | null;
  refundOnSuccess: string | null;
  chargeRequests: number;
  lastError: string | null;
  cause: StoredCause;
  stateChangedAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** A payment_attempt row in camelCase. */
export const toPaymentAttempt = (r: PaymentRow): PaymentAttempt => ({
  id: r.id,
  tenantId: r.tenant_id,
  orderId: r.order_id,
  state: r.state,
  amount: r.amount,
  currency: r.currency,
  paymentToken: r.payment_token,
  pspAccount: r.psp_account,
  idempotencyKey: r.idempotency_key,
  pspRef: r.psp_ref,
  failureReason: r.failure_reason,
  refundOnSuccess: r.refund_on_success,
  chargeRequests: r.charge_requests,
  lastError: r.last_error,
  cause: r.cause,
  stateChangedAt: r.state_changed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

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

/** A refund as commands and jobs see it (a {@link RefundRow} in camelCase). */
export interface Refund {
  id: string;
  tenantId: string;
  orderId: string;
  paymentId: string | null;
  pspAccount: string;
  pspChargeId: string;
  amount: string;
  currency: string;
  reason: string;
  state: RefundState;
  idempotencyKey: string;
  attempts: number;
  lastError: string | null;
  pspRefundId: string | null;
  cause: StoredCause | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A refund row in camelCase. */
export const toRefund = (r: RefundRow): Refund => ({
  id: r.id,
  tenantId: r.tenant_id,
  orderId: r.order_id,
  paymentId: r.payment_id,
  pspAccount: r.psp_account,
  pspChargeId: r.psp_charge_id,
  amount: r.amount,
  currency: r.currency,
  reason: r.reason,
  state: r.state,
  idempotencyKey: r.idempotency_key,
  attempts: r.attempts,
  lastError: r.last_error,
  pspRefundId: r.psp_refund_id,
  cause: r.cause,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

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
  /**
   * Why the last PSP call gave no answer (null: it answered), recorded by the same statement whether or not the
   * state moves; omitted: left as it is.
   */
  lastError?: string | null;
}

/** The result of a move: applied with the attempt as it is now, or ignored. */
export type TransitionResult =
  { outcome: 'applied'; from: PaymentState; payment: PaymentAttempt } | { outcome: 'ignored'; payment: null };

/** An attempt just moved, with the state it left. */
export interface MovedAttempt {
  from: PaymentState;
  payment: PaymentAttempt;
}

/** A row of a moving statement (`RETURNING p.*, old.state AS from_state`) as a {@link MovedAttempt}. */
const toMovedAttempt = ({
  from_state: from,
  ...row
}: PaymentRow & { from_state: PaymentState }): MovedAttempt => ({
  from,
  payment: toPaymentAttempt(row),
});

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
              last_error = CASE WHEN $10::boolean THEN $11::text ELSE p.last_error END,
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
      r.lastError !== undefined,
      r.lastError?.slice(0, 500) ?? null,
    ],
  );
  if (rows.length === 0) {
    if (r.lastError !== undefined) await noteError(tx, r.paymentId, r.lastError);
    return { outcome: 'ignored', payment: null };
  }
  return { outcome: 'applied' satisfies TransitionOutcome, ...toMovedAttempt(rows[0]) };
}

/**
 * Claims up to `limit` new attempts for charging (`created -> pending`), never one of a cancelled or refunded
 * order (docs/design/payment.md), and counts the charge request each is about to send.
 */
export async function claimNewAttempts(
  q: Pick<EntityManager, 'query'>,
  limit: number,
): Promise<MovedAttempt[]> {
  const rows: (PaymentRow & { from_state: PaymentState })[] = await q.query(
    `WITH picked AS (
       SELECT id, state FROM payment_attempt a
        WHERE state = ANY($2::text[]) AND refund_on_success IS NULL
          AND NOT EXISTS (SELECT 1 FROM order_cancellation c WHERE c.tenant_id = a.tenant_id AND c.order_id = a.order_id)
        ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED
     ), moved AS (
       UPDATE payment_attempt p SET state = 'pending', state_changed_at = now(), updated_at = now(),
                                    charge_requests = p.charge_requests + 1
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
  return rows.map(toMovedAttempt);
}

/** The attempt of an order. */
export async function findPaymentByOrder(
  tx: EntityManager,
  tenantId: string,
  orderId: string,
): Promise<PaymentAttempt | undefined> {
  const rows: PaymentRow[] = await tx.query(
    `SELECT * FROM payment_attempt WHERE tenant_id = $1 AND order_id = $2`,
    [tenantId, orderId],
  );
  return rows[0] && toPaymentAttempt(rows[0]);
}

/**
 * Records a new attempt in `created` with its first transition (one statement): one per order, and none for an
 * order already cancelled (events of two topics may cross). Returns whether it was inserted.
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
    `WITH created AS (
       INSERT INTO payment_attempt (id, tenant_id, order_id, amount, currency, payment_token, psp_account, idempotency_key, cause)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
        WHERE NOT EXISTS (SELECT 1 FROM order_cancellation WHERE tenant_id = $2 AND order_id = $3)
       ON CONFLICT DO NOTHING RETURNING id, tenant_id
     ), history AS (
       INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source, detail)
       SELECT id, tenant_id, 'none', 'created', 'charge', 'inventory reserved' FROM created
     )
     SELECT 1 FROM created`,
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
  return created.length === 1;
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

/** Marks a payment whose outcome is still open (OPEN_STATES) to be refunded if money arrives; whether it was. */
export async function markRefundOnSuccess(
  tx: EntityManager,
  paymentId: string,
  reason: string,
): Promise<boolean> {
  const marked = await updateReturning(
    tx,
    `UPDATE payment_attempt SET refund_on_success = COALESCE(refund_on_success, $2), updated_at = now()
      WHERE id = $1 AND state = ANY($3::text[]) RETURNING 1`,
    [paymentId, reason, OPEN_STATES],
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

/** What a new refund records: the charge to refund, how much, why, and the step that asked. */
export type RefundRequest = Pick<
  Refund,
  'id' | 'tenantId' | 'orderId' | 'paymentId' | 'pspAccount' | 'pspChargeId' | 'currency' | 'reason' | 'cause'
> & { amount: number };

/** The channel on which a committed refund request wakes the refund worker of every replica. */
export const REFUNDS_CHANNEL = 'payment_refunds';

/**
 * Inserts a refund request for a charge, once: a second request for the same charge does nothing. The refund worker
 * of every replica wakes when the transaction commits (whichever path asked: a compensation, a late success, the
 * orphan sweep).
 */
export async function insertRefund(tx: EntityManager, r: RefundRequest): Promise<boolean> {
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
  if (rows.length === 0) return false;
  await wakeOnCommit(tx, REFUNDS_CHANNEL);
  return true;
}

/** Counts one more charge request sent to the PSP for an attempt. */
export async function countChargeRequest(q: Pick<EntityManager, 'query'>, id: string): Promise<void> {
  await q.query(`UPDATE payment_attempt SET charge_requests = charge_requests + 1 WHERE id = $1`, [id]);
}

/**
 * Claims up to 100 attempts awaiting the PSP's answer (`AWAITING_PSP_STATES`) whose state (or last reconciliation)
 * is older than `afterMs`, stamping them reconciled now (a lease: the rest come back next round).
 */
export async function claimStuckAttempts(
  q: Pick<EntityManager, 'query'>,
  afterMs: number,
): Promise<PaymentAttempt[]> {
  const rows = await updateReturning<PaymentRow>(
    q,
    `UPDATE payment_attempt SET reconciled_at = now()
      WHERE id IN (SELECT id FROM payment_attempt
                    WHERE state = ANY($2::text[])
                      AND COALESCE(reconciled_at, state_changed_at) < now() - $1 * interval '1 millisecond'
                    ORDER BY state_changed_at LIMIT 100 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [afterMs, AWAITING_PSP_STATES],
  );
  return rows.map(toPaymentAttempt);
}

/**
 * Milliseconds until the next attempt awaiting the PSP falls due for reconciliation (<= 0: one is due now), or null
 * when none awaits the PSP: what the reconciler sleeps for.
 */
export async function nextReconcileDueMs(
  q: Pick<EntityManager, 'query'>,
  afterMs: number,
): Promise<number | null> {
  const [{ due }]: { due: string | null }[] = await q.query(
    `SELECT EXTRACT(EPOCH FROM min(COALESCE(reconciled_at, state_changed_at))
                             + $1 * interval '1 millisecond' - now()) * 1000 AS due
       FROM payment_attempt WHERE state = ANY($2::text[])`,
    [afterMs, AWAITING_PSP_STATES],
  );
  return due === null ? null : Math.ceil(Number(due));
}

/** Per open state (only those with attempts): how many sit there longer than `stuckAfterMs`, and the oldest's age. */
export async function openStateGauges(
  q: Pick<EntityManager, 'query'>,
  stuckAfterMs: number,
): Promise<{ state: PaymentState; stuck: number; oldestSeconds: number }[]> {
  const rows: { state: PaymentState; stuck: string; oldest: string | null }[] = await q.query(
    `SELECT state,
            count(*) FILTER (WHERE state_changed_at < now() - $1 * interval '1 millisecond') AS stuck,
            EXTRACT(EPOCH FROM now() - min(state_changed_at)) AS oldest
       FROM payment_attempt WHERE state = ANY($2::text[]) GROUP BY state`,
    [stuckAfterMs, OPEN_STATES],
  );
  return rows.map((r) => ({ state: r.state, stuck: Number(r.stuck), oldestSeconds: Number(r.oldest ?? 0) }));
}

/** How many refunds are parked as `refund_failed`, waiting for an operator. */
export async function countParkedRefunds(q: Pick<EntityManager, 'query'>): Promise<number> {
  const [{ parked }]: { parked: string }[] = await q.query(
    `SELECT count(*) AS parked FROM refund WHERE state = 'refund_failed'`,
  );
  return Number(parked);
}

/**
 * The ids of the tenant's captured PSP charges that nothing of ours accounts for (no refund, no orphan record, no
 * attempt with that charge in `CAPTURED_STATES`, no open attempt named in its metadata), in one query.
 */
export async function findOrphanChargeIds(
  q: Pick<EntityManager, 'query'>,
  tenantId: string,
  charges: { id: string; paymentId: string | null }[],
): Promise<string[]> {
  const rows: { id: string }[] = await q.query(
    `SELECT c.id FROM unnest($2::text[], $3::uuid[]) AS c(id, payment_id)
      WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.tenant_id = $1 AND r.psp_charge_id = c.id)
        AND NOT EXISTS (SELECT 1 FROM orphan_charge o WHERE o.tenant_id = $1 AND o.psp_charge_id = c.id)
        AND NOT EXISTS (SELECT 1 FROM payment_attempt p
                         WHERE p.tenant_id = $1 AND p.psp_ref = c.id AND p.state = ANY($5::text[]))
        AND NOT EXISTS (SELECT 1 FROM payment_attempt p
                         WHERE p.tenant_id = $1 AND p.id = c.payment_id AND p.state = ANY($4::text[])
                           AND COALESCE(p.psp_ref, c.id) = c.id)`,
    [tenantId, charges.map((c) => c.id), charges.map((c) => c.paymentId), OPEN_STATES, CAPTURED_STATES],
  );
  return rows.map((r) => r.id);
}

/** Records an orphaned charge and what the policy does about it, once per charge; whether it was new. */
export async function insertOrphanCharge(
  tx: EntityManager,
  o: {
    pspChargeId: string;
    tenantId: string;
    reference: string;
    amount: number;
    currency: string;
    action: string;
  },
): Promise<boolean> {
  const inserted: unknown[] = await tx.query(
    `INSERT INTO orphan_charge (psp_charge_id, tenant_id, reference, amount, currency, action)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
    [o.pspChargeId, o.tenantId, o.reference, o.amount, o.currency, o.action],
  );
  return inserted.length === 1;
}

/** Records a PSP event id for the tenant (`received`); false when it was already there (a redelivery). */
export async function insertPspEvent(
  tx: EntityManager,
  e: { eventId: string; tenantId: string; type: string; chargeId: string },
): Promise<boolean> {
  const fresh: unknown[] = await tx.query(
    `INSERT INTO psp_event (event_id, tenant_id, type, charge_id, outcome) VALUES ($1, $2, $3, $4, 'received')
     ON CONFLICT DO NOTHING RETURNING 1`,
    [e.eventId, e.tenantId, e.type, e.chargeId],
  );
  return fresh.length === 1;
}

/** Records what a PSP event did, and to which payment. */
export async function notePspEventOutcome(
  tx: EntityManager,
  e: { eventId: string; tenantId: string; outcome: string; paymentId: string | null },
): Promise<void> {
  await tx.query(
    `UPDATE psp_event SET outcome = $2, payment_id = $3 WHERE tenant_id = $4 AND event_id = $1`,
    [e.eventId, e.outcome, e.paymentId, e.tenantId],
  );
}

/**
 * The tenant's attempt a PSP charge is about (by our payment id, else by the charge id), if any, and whether that
 * very charge is already its money (succeeded or refunded with it): a webhook about it then tells nothing new.
 */
export async function findAttemptForCharge(
  tx: EntityManager,
  tenantId: string,
  paymentId: string | null,
  pspRef: string,
): Promise<{ id: string; holdsCharge: boolean } | null> {
  const rows: { id: string; holds_charge: boolean }[] = await tx.query(
    `SELECT id, (psp_ref IS NOT DISTINCT FROM $3 AND state IN ('succeeded', 'refunded')) AS holds_charge
       FROM payment_attempt WHERE tenant_id = $1 AND (id = $2::uuid OR psp_ref = $3) LIMIT 1`,
    [tenantId, paymentId, pspRef],
  );
  return rows[0] ? { id: rows[0].id, holdsCharge: rows[0].holds_charge } : null;
}

/**
 * The tenant's refund of exactly that charge, amount and currency whose PSP refund id is `pspRefundId` or not
 * yet known, if any.
 */
export async function findRefundForPspRefund(
  tx: EntityManager,
  tenantId: string,
  r: { pspChargeId: string; amount: number; currency: string; pspRefundId: string },
): Promise<{ id: string; paymentId: string | null } | undefined> {
  const rows: { id: string; payment_id: string | null }[] = await tx.query(
    `SELECT id, payment_id FROM refund
      WHERE tenant_id = $1 AND psp_charge_id = $2 AND amount = $3 AND currency = $4
        AND (psp_refund_id IS NULL OR psp_refund_id = $5)`,
    [tenantId, r.pspChargeId, r.amount, r.currency, r.pspRefundId],
  );
  return rows[0] && { id: rows[0].id, paymentId: rows[0].payment_id };
}

/** How a refund ended at the PSP: its refund id, or the error that parked it. */
export type RefundOutcome =
  { state: 'succeeded'; pspRefundId: string } | { state: 'refund_failed'; error: string };

/** Moves a refund to `succeeded` or `refund_failed`; undefined when its state does not allow it. */
export async function settleRefund(
  tx: EntityManager,
  refundId: string,
  outcome: RefundOutcome,
): Promise<Refund | undefined> {
  const succeeded = outcome.state === 'succeeded';
  const [row] = await updateReturning<RefundRow>(
    tx,
    `UPDATE refund SET state = $2, psp_refund_id = coalesce($3, psp_refund_id), last_error = $4, updated_at = now()
      WHERE id = $1 AND state = ANY($5::text[]) RETURNING *`,
    [
      refundId,
      outcome.state,
      succeeded ? outcome.pspRefundId : null,
      succeeded ? null : outcome.error.slice(0, 500),
      REFUND_ALLOWED_FROM[outcome.state],
    ],
  );
  return row && toRefund(row);
}

/** How many due refunds one claim takes at most. */
export const REFUND_CLAIM_LIMIT = 20;

/** Claims up to REFUND_CLAIM_LIMIT due pending refunds, counting the attempt and leasing each for `leaseMs`. */
export async function claimDueRefunds(q: Pick<EntityManager, 'query'>, leaseMs: number): Promise<Refund[]> {
  const rows = await updateReturning<RefundRow>(
    q,
    `UPDATE refund SET attempts = attempts + 1, next_attempt_at = now() + $1 * interval '1 millisecond', updated_at = now()
      WHERE id IN (SELECT id FROM refund WHERE state = 'pending' AND next_attempt_at <= now()
                    ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [leaseMs, REFUND_CLAIM_LIMIT],
  );
  return rows.map(toRefund);
}

/** Milliseconds until the earliest pending refund is due (0 or less: due now), or null when none is pending. */
export async function nextRefundDueMs(q: Pick<EntityManager, 'query'>): Promise<number | null> {
  const [{ due }]: { due: string | null }[] = await q.query(
    `SELECT EXTRACT(EPOCH FROM min(next_attempt_at) - now()) * 1000 AS due FROM refund WHERE state = 'pending'`,
  );
  return due === null ? null : Math.ceil(Number(due));
}

/** Puts a still pending refund off by `backoffMs`, recording why the last try failed. */
export async function deferRefund(
  q: Pick<EntityManager, 'query'>,
  refundId: string,
  backoffMs: number,
  error: string,
): Promise<void> {
  await q.query(
    `UPDATE refund SET next_attempt_at = now() + $2 * interval '1 millisecond', last_error = $3, updated_at = now()
      WHERE id = $1 AND state = 'pending'`,
    [refundId, backoffMs, error.slice(0, 500)],
  );
}

/** Deletes up to `limit` PSP event ids older than `retentionMs`; returns how many it deleted. */
export async function deleteOldPspEvents(
  q: Pick<EntityManager, 'query'>,
  retentionMs: number,
  limit: number,
): Promise<number> {
  const deleted = await updateReturning(
    q,
    `DELETE FROM psp_event WHERE (tenant_id, event_id) IN (
       SELECT tenant_id, event_id FROM psp_event
        WHERE received_at < now() - $1 * interval '1 millisecond'
        ORDER BY received_at LIMIT $2)
     RETURNING 1`,
    [retentionMs, limit],
  );
  return deleted.length;
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
