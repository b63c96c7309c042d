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
  Waiting,
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

/** What a saga row says it waits for (its waiting_* columns), or null: it waits for nothing. */
export const waitingOf = (row: SagaRow): Waiting | null =>
  row.waitingStep && row.waitingService && row.waitingSince
    ? {
        step: row.waitingStep,
        service: row.waitingService,
        compensation: row.waitingCompensation ?? false,
        since: row.waitingSince,
      }
    : null;

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

/** Whether the saga has ended, row-locked for the rest of the transaction (undefined: no such saga). */
export async function endedFlagOf(
  tx: EntityManager,
  tenantId: string,
  sagaId: string,
): Promise<boolean | undefined> {
  const { rows } = await sql<{ terminal: boolean }>(
    tx,
    `SELECT terminal FROM saga WHERE tenant_id = $1 AND saga_id = $2 FOR UPDATE`,
    [tenantId, sagaId],
  );
  return rows[0]?.terminal;
}

/** A saga's key. */
export interface SagaKey {
  tenantId: string;
  sagaId: string;
}

const keyArrays = (keys: readonly SagaKey[]) => [keys.map((k) => k.tenantId), keys.map((k) => k.sagaId)];

/** Records many steps in one statement; returns the event ids recorded now (the others were already there). */
export async function insertSteps(tx: EntityManager, steps: readonly StoredStep[]): Promise<Set<string>> {
  const { rows } = await sql<{ event_id: string }>(
    tx,
    `INSERT INTO saga_step (event_id, tenant_id, saga_id, type, version, service, outcome, occurred_at,
                            causation_id, correlation_id, traceparent, trace_id, sequence, facts)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[],
                          $8::timestamptz[], $9::uuid[], $10::text[], $11::text[], $12::text[], $13::int[],
                          $14::jsonb[])
     ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
    [
      steps.map((s) => s.eventId),
      steps.map((s) => s.tenantId),
      steps.map((s) => s.sagaId),
      steps.map((s) => s.type),
      steps.map((s) => s.version),
      steps.map((s) => s.service),
      steps.map((s) => s.outcome),
      steps.map((s) => s.occurredAt),
      steps.map((s) => s.causationId),
      steps.map((s) => s.correlationId),
      steps.map((s) => s.traceparent),
      steps.map((s) => s.traceId),
      steps.map((s) => s.sequence),
      steps.map((s) => JSON.stringify(s.facts)),
    ],
  );
  return new Set(rows.map((r) => r.event_id.toLowerCase()));
}

/**
 * Creates each saga's row on its first step and locks the rows, in one statement and in key order: steps of one
 * saga arrive on several topics at once, the last to commit must derive the state from all of them, and two
 * chunks locking overlapping sagas cannot deadlock. `DO UPDATE ... WHERE false` locks an existing row (even one
 * committed after this statement's snapshot) without writing a row version: saveStates writes the chunk's one.
 */
export async function lockSagas(tx: EntityManager, firsts: readonly StoredStep[]): Promise<void> {
  const sorted = [...firsts].sort(
    (a, b) => a.tenantId.localeCompare(b.tenantId) || a.sagaId.localeCompare(b.sagaId),
  );
  await sql(
    tx,
    `INSERT INTO saga (tenant_id, saga_id, status, terminal, started, started_at, compensated, step_count,
                       last_event_id, last_type, last_service, last_outcome, last_occurred_at)
     SELECT f.tenant_id, f.saga_id, 'PENDING', false, false, f.at, false, 0, f.event_id, f.type, f.service,
            f.outcome, f.at
       FROM unnest($1::text[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[], $7::text[])
            WITH ORDINALITY AS f(tenant_id, saga_id, at, event_id, type, service, outcome, n)
      ORDER BY f.n
     ON CONFLICT (tenant_id, saga_id) DO UPDATE SET updated_at = now() WHERE false`,
    [
      sorted.map((s) => s.tenantId),
      sorted.map((s) => s.sagaId),
      sorted.map((s) => s.occurredAt),
      sorted.map((s) => s.eventId),
      sorted.map((s) => s.type),
      sorted.map((s) => s.service),
      sorted.map((s) => s.outcome),
    ],
  );
}

/** What a chunk derives many (locked) sagas from: their stuck flags and every recorded step. */
export interface SagasOnRecord {
  /** The stuck flag of each saga, by `tenantId/sagaId`. */
  stuck: Map<string, Pick<SagaRow, 'stuck' | 'stuckSince' | 'stuckReason'>>;
  /** Every recorded step of each saga, by `tenantId/sagaId`. */
  steps: Map<string, StoredStep[]>;
}

/** The stuck flags and the steps of many sagas in one statement (one round trip per chunk, not two). */
export async function sagasOnRecord(tx: EntityManager, keys: readonly SagaKey[]): Promise<SagasOnRecord> {
  const { rows } = await sql<
    StoredStep & {
      sagaStuck: boolean | null;
      sagaStuckSince: Date | null;
      sagaStuckReason: StuckReason | null;
    }
  >(
    tx,
    `SELECT st.*, s.stuck AS "sagaStuck", s.stuck_since AS "sagaStuckSince", s.stuck_reason AS "sagaStuckReason"
       FROM (SELECT ${STEP_COLUMNS} FROM saga_step
              WHERE (tenant_id, saga_id) IN (SELECT * FROM unnest($1::text[], $2::uuid[]))) st
       LEFT JOIN saga s ON s.tenant_id = st."tenantId" AND s.saga_id = st."sagaId"`,
    keyArrays(keys),
  );
  const out: SagasOnRecord = { stuck: new Map(), steps: new Map() };
  for (const { sagaStuck, sagaStuckSince, sagaStuckReason, ...step } of rows) {
    const key = sagaKeyOf(step);
    if (sagaStuck !== null && !out.stuck.has(key))
      out.stuck.set(key, { stuck: sagaStuck, stuckSince: sagaStuckSince, stuckReason: sagaStuckReason });
    const steps = out.steps.get(key);
    if (steps) steps.push(step);
    else out.steps.set(key, [step]);
  }
  return out;
}

/** One saga's derived state and stuck flag, as saveStates writes it. */
export interface SagaStateWrite extends SagaKey {
  state: SagaState;
  stuck: { stuck: boolean; since: Date | null; reason: StuckReason | null };
}

/** saveState for many sagas in one statement. */
export async function saveStates(tx: EntityManager, writes: readonly SagaStateWrite[]): Promise<void> {
  const col = <T>(f: (w: SagaStateWrite) => T) => writes.map(f);
  await sql(
    tx,
    `UPDATE saga s SET status = v.status, terminal = v.terminal, started = v.started, started_at = v.started_at,
                       terminal_at = v.terminal_at, compensated = v.compensated, step_count = v.step_count,
                       last_event_id = v.last_event_id, last_type = v.last_type, last_service = v.last_service,
                       last_outcome = v.last_outcome, last_occurred_at = v.last_occurred_at,
                       waiting_step = v.waiting_step, waiting_service = v.waiting_service,
                       waiting_compensation = v.waiting_compensation, waiting_since = v.waiting_since,
                       stuck = v.stuck, stuck_since = v.stuck_since, stuck_reason = v.stuck_reason,
                       updated_at = now()
       FROM unnest($1::text[], $2::uuid[], $3::text[], $4::bool[], $5::bool[], $6::timestamptz[],
                   $7::timestamptz[], $8::bool[], $9::int[], $10::uuid[], $11::text[], $12::text[], $13::text[],
                   $14::timestamptz[], $15::text[], $16::text[], $17::bool[], $18::timestamptz[], $19::bool[],
                   $20::timestamptz[], $21::text[])
         AS v(tenant_id, saga_id, status, terminal, started, started_at, terminal_at, compensated, step_count,
              last_event_id, last_type, last_service, last_outcome, last_occurred_at, waiting_step,
              waiting_service, waiting_compensation, waiting_since, stuck, stuck_since, stuck_reason)
      WHERE s.tenant_id = v.tenant_id AND s.saga_id = v.saga_id`,
    [
      col((w) => w.tenantId),
      col((w) => w.sagaId),
      col((w) => w.state.status),
      col((w) => w.state.terminal),
      col((w) => w.state.started),
      col((w) => w.state.startedAt),
      col((w) => w.state.terminalAt),
      col((w) => w.state.compensated),
      col((w) => w.state.stepCount),
      col((w) => w.state.lastStep.eventId),
      col((w) => w.state.lastStep.type),
      col((w) => w.state.lastStep.service),
      col((w) => w.state.lastStep.outcome),
      col((w) => w.state.lastStep.occurredAt),
      col((w) => w.state.waitingFor?.step ?? null),
      col((w) => w.state.waitingFor?.service ?? null),
      col((w) => w.state.waitingFor?.compensation ?? null),
      col((w) => w.state.waitingFor?.since ?? null),
      col((w) => w.stuck.stuck),
      col((w) => w.stuck.since),
      col((w) => w.stuck.reason),
    ],
  );
}

/** The map key of a saga. */
export const sagaKeyOf = (k: SagaKey): string => `${k.tenantId}/${k.sagaId.toLowerCase()}`;

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
