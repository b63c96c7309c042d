import { DataSource, EntityManager } from 'typeorm';
import { EventType } from '@checkout/contracts';
import { sql } from '@checkout/messaging';
import {
  OrderStatus,
  SagaService,
  SagaState,
  SagaStep,
  StepFacts,
  StepOutcome,
  StuckReason,
  WAIT_STEPS,
  WaitStep,
} from '../domain';

/** A step as stored, with the envelope fields the timeline shows besides the domain's. */
export interface StoredStep extends SagaStep {
  tenantId: string;
  sagaId: string;
  version: number;
  correlationId: string;
  traceId: string | null;
  sequence: number;
}

/** A saga's state row: the derived state plus what the sweep decided. */
export interface SagaRow {
  tenantId: string;
  sagaId: string;
  status: OrderStatus;
  terminal: boolean;
  started: boolean;
  startedAt: Date;
  terminalAt: Date | null;
  compensated: boolean;
  stepCount: number;
  lastEventId: string;
  lastType: EventType;
  lastService: SagaService;
  lastOutcome: StepOutcome;
  lastOccurredAt: Date;
  waitingStep: WaitStep | null;
  waitingService: SagaService | null;
  waitingCompensation: boolean | null;
  waitingSince: Date | null;
  stuck: boolean;
  stuckSince: Date | null;
  stuckReason: StuckReason | null;
}

const STEP_COLUMNS = `event_id AS "eventId", tenant_id AS "tenantId", saga_id AS "sagaId", type, version, service,
  outcome, occurred_at AS "occurredAt", recorded_at AS "recordedAt", causation_id AS "causationId",
  correlation_id AS "correlationId", traceparent, trace_id AS "traceId", sequence, facts`;

const SAGA_COLUMNS = `tenant_id AS "tenantId", saga_id AS "sagaId", status, terminal, started, started_at AS "startedAt",
  terminal_at AS "terminalAt", compensated, step_count AS "stepCount", last_event_id AS "lastEventId",
  last_type AS "lastType", last_service AS "lastService", last_outcome AS "lastOutcome",
  last_occurred_at AS "lastOccurredAt", waiting_step AS "waitingStep", waiting_service AS "waitingService",
  waiting_compensation AS "waitingCompensation", waiting_since AS "waitingSince", stuck,
  stuck_since AS "stuckSince", stuck_reason AS "stuckReason"`;

/** Runs one UPDATE ... RETURNING in its own short transaction and returns its rows (DataSource.query would not). */
async function updateReturning<R>(ds: DataSource, text: string, params: unknown[]): Promise<R[]> {
  return ds.transaction(async (tx) => (await sql<R>(tx, text, params)).rows);
}

/** Records one step; false when its event id is already recorded (a redelivery under another consumer name). */
export async function insertStep(tx: EntityManager, s: StoredStep): Promise<boolean> {
  const { rowCount } = await sql(
    tx,
    `INSERT INTO saga_step (event_id, tenant_id, saga_id, type, version, service, outcome, occurred_at,
                            causation_id, correlation_id, traceparent, trace_id, sequence, facts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb)
     ON CONFLICT (event_id) DO NOTHING RETURNING 1`,
    [
      s.eventId,
      s.tenantId,
      s.sagaId,
      s.type,
      s.version,
      s.service,
      s.outcome,
      s.occurredAt,
      s.causationId,
      s.correlationId,
      s.traceparent,
      s.traceId,
      s.sequence,
      JSON.stringify(s.facts),
    ],
  );
  return rowCount === 1;
}

/**
 * Creates the saga's row if it is the first step, and locks it: steps of one saga arrive on several topics at
 * once, and the last one to commit must derive the state from all of them.
 */
export async function lockSaga(tx: EntityManager, first: StoredStep): Promise<void> {
  await sql(
    tx,
    `INSERT INTO saga (tenant_id, saga_id, status, terminal, started, started_at, compensated, step_count,
                       last_event_id, last_type, last_service, last_outcome, last_occurred_at)
     VALUES ($1, $2, 'PENDING', false, false, $3, false, 0, $4, $5, $6, $7, $3)
     ON CONFLICT (tenant_id, saga_id) DO UPDATE SET updated_at = now()`,
    [first.tenantId, first.sagaId, first.occurredAt, first.eventId, first.type, first.service, first.outcome],
  );
}

/** The stuck flag of a saga, row-locked for the rest of the transaction. */
export async function stuckOf(
  tx: EntityManager,
  tenantId: string,
  sagaId: string,
): Promise<Pick<SagaRow, 'stuck' | 'stuckSince' | 'stuckReason'>[]> {
  const { rows } = await sql<Pick<SagaRow, 'stuck' | 'stuckSince' | 'stuckReason'>>(
    tx,
    `SELECT stuck, stuck_since AS "stuckSince", stuck_reason AS "stuckReason" FROM saga
      WHERE tenant_id = $1 AND saga_id = $2 FOR UPDATE`,
    [tenantId, sagaId],
  );
  return rows;
}

/** A page of saga keys after the given one, in key order (for re-deriving every saga). */
export async function sagaKeysAfter(
  ds: DataSource,
  after: { tenantId: string; sagaId: string } | null,
  limit: number,
): Promise<{ tenantId: string; sagaId: string }[]> {
  return ds.query(
    `SELECT tenant_id AS "tenantId", saga_id AS "sagaId" FROM saga
      WHERE ($1::text IS NULL OR (tenant_id, saga_id) > ($1::text, $2::uuid))
      ORDER BY tenant_id, saga_id LIMIT $3`,
    [after?.tenantId ?? null, after?.sagaId ?? null, limit],
  );
}

/** Every recorded step of a saga (in no particular order: the domain orders them). */
export async function stepsOf(
  db: EntityManager | DataSource,
  tenantId: string,
  sagaId: string,
): Promise<StoredStep[]> {
  const rows: (StoredStep & { facts: StepFacts })[] = await db.query(
    `SELECT ${STEP_COLUMNS} FROM saga_step WHERE tenant_id = $1 AND saga_id = $2`,
    [tenantId, sagaId],
  );
  return rows;
}

/** Writes the derived state and the stuck flag the caller decided. */
export async function saveState(
  tx: EntityManager,
  tenantId: string,
  sagaId: string,
  state: SagaState,
  stuck: { stuck: boolean; since: Date | null; reason: StuckReason | null },
): Promise<void> {
  const w = state.waitingFor;
  await sql(
    tx,
    `UPDATE saga SET status = $3, terminal = $4, started = $5, started_at = $6, terminal_at = $7,
                     compensated = $8, step_count = $9, last_event_id = $10, last_type = $11, last_service = $12,
                     last_outcome = $13, last_occurred_at = $14, waiting_step = $15, waiting_service = $16,
                     waiting_compensation = $17, waiting_since = $18, stuck = $19, stuck_since = $20,
                     stuck_reason = $21, updated_at = now()
      WHERE tenant_id = $1 AND saga_id = $2`,
    [
      tenantId,
      sagaId,
      state.status,
      state.terminal,
      state.started,
      state.startedAt,
      state.terminalAt,
      state.compensated,
      state.stepCount,
      state.lastStep.eventId,
      state.lastStep.type,
      state.lastStep.service,
      state.lastStep.outcome,
      state.lastStep.occurredAt,
      w?.step ?? null,
      w?.service ?? null,
      w?.compensation ?? null,
      w?.since ?? null,
      stuck.stuck,
      stuck.since,
      stuck.reason,
    ],
  );
}

/** A tenant's saga, or null (another tenant's saga is not found either). */
export async function findSaga(ds: DataSource, tenantId: string, sagaId: string): Promise<SagaRow | null> {
  const rows: SagaRow[] = await ds.query(
    `SELECT ${SAGA_COLUMNS} FROM saga WHERE tenant_id = $1 AND saga_id = $2`,
    [tenantId, sagaId],
  );
  return rows[0] ?? null;
}

/** Filters of the saga list. */
export interface SagaFilter {
  stuck?: boolean;
  waitingFor?: WaitStep;
  limit: number;
}

/** A tenant's sagas, most recently active first (stuck ones: most recently stuck first), and how many match. */
export async function listSagas(
  ds: DataSource,
  tenantId: string,
  filter: SagaFilter,
): Promise<{ total: number; rows: SagaRow[] }> {
  const where = ['tenant_id = $1'];
  const params: unknown[] = [tenantId];
  if (filter.stuck !== undefined) where.push(filter.stuck ? 'stuck' : 'NOT stuck');
  if (filter.waitingFor) {
    params.push(filter.waitingFor);
    where.push(`waiting_step = $${params.length}`);
  }
  const order = filter.stuck ? 'stuck_since DESC, saga_id' : 'last_occurred_at DESC, saga_id';
  const [{ total }]: { total: number }[] = await ds.query(
    `SELECT count(*)::int AS total FROM saga WHERE ${where.join(' AND ')}`,
    params,
  );
  const rows: SagaRow[] = await ds.query(
    `SELECT ${SAGA_COLUMNS} FROM saga WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${params.length + 1}`,
    [...params, filter.limit],
  );
  return { total, rows };
}

/** Open, not yet stuck sagas that may be overdue: waiting at least the shortest step timeout, or old. */
export async function stuckCandidates(
  ds: DataSource,
  now: Date,
  shortestStepMs: number,
  overallMs: number,
  limit: number,
): Promise<SagaRow[]> {
  return ds.query(
    `SELECT ${SAGA_COLUMNS} FROM saga
      WHERE NOT terminal AND NOT stuck
        AND (waiting_since <= $1::timestamptz - $2 * interval '1 millisecond'
             OR started_at <= $1::timestamptz - $3 * interval '1 millisecond')
      ORDER BY waiting_since NULLS LAST LIMIT $4`,
    [now, shortestStepMs, overallMs, limit],
  );
}

/**
 * Marks a saga stuck if it is still exactly as the sweep saw it (no step recorded since): true when this
 * call marked it, so that one log line is written per saga becoming stuck, whatever the number of replicas.
 */
export async function markStuck(
  ds: DataSource,
  seen: SagaRow,
  now: Date,
  reason: StuckReason,
): Promise<boolean> {
  const rows = await updateReturning(
    ds,
    `UPDATE saga SET stuck = true, stuck_since = $3, stuck_reason = $4, updated_at = now()
      WHERE tenant_id = $1 AND saga_id = $2 AND NOT stuck AND NOT terminal AND step_count = $5
      RETURNING 1`,
    [seen.tenantId, seen.sagaId, now, reason, seen.stepCount],
  );
  return rows.length === 1;
}

/** Ended sagas whose duration has not been observed yet, claimed once (by one replica). */
export async function claimEndedDurations(
  ds: DataSource,
  limit: number,
): Promise<{ tenantId: string; status: OrderStatus; seconds: number }[]> {
  const rows = await updateReturning<{ tenantId: string; status: OrderStatus; seconds: string }>(
    ds,
    `UPDATE saga s SET duration_observed = true
       FROM (SELECT tenant_id, saga_id FROM saga WHERE terminal AND NOT duration_observed
              ORDER BY terminal_at LIMIT $1 FOR UPDATE SKIP LOCKED) c
      WHERE s.tenant_id = c.tenant_id AND s.saga_id = c.saga_id
      RETURNING s.tenant_id AS "tenantId", s.status,
                GREATEST(0, EXTRACT(EPOCH FROM s.terminal_at - s.started_at)) AS seconds`,
    [limit],
  );
  return rows.map((r) => ({ ...r, seconds: Number(r.seconds) }));
}

/** Stuck sagas now, by tenant and the step they wait for. */
export async function stuckCounts(
  ds: DataSource,
): Promise<{ tenantId: string; waitingStep: WaitStep | null; count: number }[]> {
  return ds.query(
    `SELECT tenant_id AS "tenantId", waiting_step AS "waitingStep", count(*)::int AS count
       FROM saga WHERE stuck GROUP BY tenant_id, waiting_step`,
  );
}

/** The wait steps, for metric labels. */
export const WAIT_STEP_NAMES = Object.keys(WAIT_STEPS) as WaitStep[];
