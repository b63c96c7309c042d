import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import {
  OUTCOME_OF,
  SagaState,
  StuckTimeouts,
  deriveSagaState,
  factsOf,
  serviceOf,
  stuckVerdict,
  traceIdOf,
  UnclassifiedType,
} from '../../domain';
import {
  StoredStep,
  insertStep,
  lockSaga,
  saveState,
  stepsOf,
  stuckOf,
} from '../../database/saga.repository';

/**
 * Derives a (locked) saga's state again from all its recorded steps and saves it. A saga that moved is no
 * longer stuck; only the sweep marks sagas stuck.
 */
export async function rederiveSaga(
  tx: EntityManager,
  tenantId: string,
  sagaId: string,
  timeouts: StuckTimeouts,
  now: Date,
): Promise<{ state: SagaState; stillStuck: boolean }> {
  const [before] = await stuckOf(tx, tenantId, sagaId);
  const state = deriveSagaState(await stepsOf(tx, tenantId, sagaId));
  const verdict = stuckVerdict(state, now, timeouts);
  // Still stuck only if it was and still is: the sweep decides (and logs) when a saga becomes stuck.
  const stillStuck = before.stuck && verdict.stuck;
  await saveState(tx, tenantId, sagaId, state, {
    stuck: stillStuck,
    since: stillStuck ? before.stuckSince : null,
    reason: stillStuck ? verdict.reason : null,
  });
  return { state, stillStuck };
}

/** What recording one event did. */
export type RecordOutcome =
  { recorded: false } | { recorded: true; state: SagaState; step: StoredStep; stillStuck: boolean };

/**
 * RecordSagaStep: stores one saga event as a step and derives the saga's state again from all its steps, in
 * the consumer's inbox transaction. A saga that moved is no longer stuck; only the sweep marks sagas stuck.
 */
export class RecordSagaStep {
  constructor(
    private readonly timeouts: StuckTimeouts,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async execute(tx: EntityManager, event: SagaEvent): Promise<RecordOutcome> {
    // The tenant and saga checks (SAGA.UNKNOWN_TENANT, SAGA.SAGA_MISMATCH) are the consumer transport's.
    const outcome = OUTCOME_OF[event.type];
    // A type added to the registry but not classified here is parked (and replayable), never guessed.
    if (!outcome) throw new UnclassifiedType(event.type);
    const step: StoredStep = {
      eventId: event.eventId,
      tenantId: event.tenantId,
      sagaId: event.sagaId,
      type: event.type,
      version: event.version,
      service: serviceOf(event.type),
      outcome,
      occurredAt: new Date(event.occurredAt),
      recordedAt: this.clock(),
      causationId: event.causationId,
      correlationId: event.correlationId,
      traceparent: event.traceparent,
      traceId: traceIdOf(event.traceparent),
      sequence: event.sequence,
      facts: factsOf(event.payload),
    };
    if (!(await insertStep(tx, step))) return { recorded: false };
    await lockSaga(tx, step);
    const { state, stillStuck } = await rederiveSaga(
      tx,
      step.tenantId,
      step.sagaId,
      this.timeouts,
      this.clock(),
    );
    return { recorded: true, state, step, stillStuck };
  }
}
