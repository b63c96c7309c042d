import { SagaListView, SagaView as ContractSagaView } from '@checkout/contracts';
import { StuckTimeouts, Waiting, deriveSagaState, orderSteps, stepDetail, stuckVerdict } from '../domain';
import { SagaRow, StoredStep, waitingOf } from '../database/saga.repository';

/** GET /v1/sagas/{orderId} (the contract: libs/contracts/src/http/saga-tracker.ts). */
export type SagaView = ContractSagaView;
/** One step of a timeline as the API answers it. */
export type TimelineStepView = SagaView['timeline'][number];
/** The derived state of a saga, as the API answers it. */
export type SagaStateView = SagaView['state'];
/** What a saga waits for, as the API answers it. */
export type WaitingView = NonNullable<SagaStateView['waitingFor']>;
/** One item of GET /v1/sagas. */
export type SagaSummaryView = SagaListView['sagas'][number];

/** The timeline and state of a saga from its stored steps and row, at a given instant. */
export function sagaView(row: SagaRow, steps: StoredStep[], now: Date, timeouts: StuckTimeouts): SagaView {
  const ordered = orderSteps(steps) as StoredStep[];
  const state = deriveSagaState(ordered);
  const verdict = stuckVerdict(state, now, timeouts);
  const start = ordered[0].occurredAt.getTime();
  const indexOf = new Map(ordered.map((s, i) => [s.eventId, i]));
  return {
    orderId: row.sagaId,
    tenantId: row.tenantId,
    traceIds: [...new Set(ordered.map((s) => s.traceId).filter((t): t is string => t !== null))],
    state: {
      status: state.status,
      terminal: state.terminal,
      started: state.started,
      complete: state.complete,
      missingCauses: state.missingCauses,
      startedAt: state.startedAt.toISOString(),
      terminalAt: state.terminalAt?.toISOString() ?? null,
      durationMs: state.terminalAt ? state.terminalAt.getTime() - state.startedAt.getTime() : null,
      compensated: state.compensated,
      lastStep: { ...state.lastStep, occurredAt: state.lastStep.occurredAt.toISOString() },
      waitingFor: waitingView(state.waitingFor, now),
      stuck: row.stuck,
      stuckSince: row.stuckSince?.toISOString() ?? null,
      stuckReason: row.stuckReason,
      deadline: verdict.deadline?.toISOString() ?? null,
      stepCount: state.stepCount,
    },
    timeline: ordered.map((s, index) => ({
      index,
      eventId: s.eventId,
      type: s.type,
      service: s.service,
      outcome: s.outcome,
      compensation: s.outcome === 'compensation',
      occurredAt: s.occurredAt.toISOString(),
      recordedAt: s.recordedAt.toISOString(),
      offsetMs: s.occurredAt.getTime() - start,
      causationId: s.causationId,
      causedBy: s.causationId !== null ? (indexOf.get(s.causationId) ?? null) : null,
      traceId: s.traceId,
      traceparent: s.traceparent,
      sequence: s.sequence,
      detail: stepDetail(s.facts),
    })),
  };
}

/** What a saga waits for, and how long it has waited at `now`. */
const waitingView = (w: Waiting | null, now: Date): WaitingView | null =>
  w && {
    step: w.step,
    service: w.service,
    compensation: w.compensation,
    since: w.since.toISOString(),
    waitedMs: Math.max(0, now.getTime() - w.since.getTime()),
  };

/** A saga list item from its row, at a given instant. */
export function sagaSummary(row: SagaRow, now: Date): SagaSummaryView {
  return {
    orderId: row.sagaId,
    status: row.status,
    terminal: row.terminal,
    startedAt: row.startedAt.toISOString(),
    lastStep: {
      type: row.lastType,
      service: row.lastService,
      outcome: row.lastOutcome,
      occurredAt: row.lastOccurredAt.toISOString(),
    },
    waitingFor: waitingView(waitingOf(row), now),
    stuck: row.stuck,
    stuckSince: row.stuckSince?.toISOString() ?? null,
    stuckReason: row.stuckReason,
  };
}
