import { Inject, Injectable } from '@nestjs/common';
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
import { SagaMetrics } from '../../saga.metrics';
import { STUCK_TIMEOUTS } from '../../saga.tokens';
import {
  SagaStateWrite,
  StoredStep,
  insertSteps,
  lockSagas,
  sagaKeyOf,
  sagasOnRecord,
  saveState,
  saveStates,
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
 * RecordSagaStepHandler: stores saga events as steps and derives each touched saga's state again from all its steps, in
 * the consumer's inbox transaction, a chunk of events in a fixed number of statements. A saga that moved is no
 * longer stuck; only the sweep marks sagas stuck.
 */
@Injectable()
export class RecordSagaStepHandler {
  constructor(
    @Inject(STUCK_TIMEOUTS) private readonly timeouts: StuckTimeouts,
    private readonly metrics: SagaMetrics,
  ) {}

  async execute(tx: EntityManager, event: SagaEvent): Promise<RecordOutcome> {
    return (await this.executeAll(tx, [event]))[0];
  }

  /** Records a chunk of events; the outcomes are in the order of the events. */
  async executeAll(tx: EntityManager, events: readonly SagaEvent[]): Promise<RecordOutcome[]> {
    const steps = events.map((event) => this.stepOf(event));
    const recorded = await insertSteps(tx, steps);
    const fresh = steps.filter((s) => recorded.has(s.eventId.toLowerCase()));
    if (fresh.length === 0) return steps.map(() => ({ recorded: false }));
    const firsts = new Map<string, StoredStep>();
    for (const s of fresh) if (!firsts.has(sagaKeyOf(s))) firsts.set(sagaKeyOf(s), s);
    await lockSagas(tx, [...firsts.values()]);
    const keys = [...firsts.values()].map(({ tenantId, sagaId }) => ({ tenantId, sagaId }));
    const { stuck: before, steps: stepsBySaga } = await sagasOnRecord(tx, keys);
    const now = new Date();
    const derived = new Map<string, SagaStateWrite & { stillStuck: boolean }>();
    for (const key of keys) {
      const k = sagaKeyOf(key);
      const state = deriveSagaState(stepsBySaga.get(k) ?? []);
      const was = before.get(k);
      const verdict = stuckVerdict(state, now, this.timeouts);
      // Still stuck only if it was and still is: the sweep decides (and logs) when a saga becomes stuck.
      const stillStuck = (was?.stuck ?? false) && verdict.stuck;
      derived.set(k, {
        ...key,
        state,
        stillStuck,
        stuck: {
          stuck: stillStuck,
          since: stillStuck ? (was?.stuckSince ?? null) : null,
          reason: stillStuck ? verdict.reason : null,
        },
      });
    }
    await saveStates(tx, [...derived.values()]);
    return steps.map((step) => {
      if (!recorded.has(step.eventId.toLowerCase())) return { recorded: false };
      this.metrics.stepRecorded(step.type, step.outcome);
      const { state, stillStuck } = derived.get(sagaKeyOf(step))!;
      return { recorded: true, state, step, stillStuck };
    });
  }

  private stepOf(event: SagaEvent): StoredStep {
    // The tenant and saga checks (SAGA.UNKNOWN_TENANT, SAGA.SAGA_MISMATCH) are the consumer transport's.
    const outcome = OUTCOME_OF[event.type];
    // A type added to the registry but not classified here is parked (and replayable), never guessed.
    if (!outcome) throw new UnclassifiedType(event.type);
    return {
      eventId: event.eventId,
      tenantId: event.tenantId,
      sagaId: event.sagaId,
      type: event.type,
      version: event.version,
      service: serviceOf(event.type),
      outcome,
      occurredAt: new Date(event.occurredAt),
      recordedAt: new Date(),
      causationId: event.causationId,
      correlationId: event.correlationId,
      traceparent: event.traceparent,
      traceId: traceIdOf(event.traceparent),
      sequence: event.sequence,
      facts: factsOf(event.payload),
    };
  }
}
