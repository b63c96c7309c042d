import { SagaState, WAIT_STEPS, WaitStep } from './saga-state';

/** How long each step may take, and the whole saga, before the saga counts as stuck. */
export interface StuckTimeouts {
  overallMs: number;
  steps: Record<WaitStep, number>;
}

/** Why a saga counts as stuck. */
export type StuckReason = 'step-timeout' | 'overall-timeout';

/** Whether a saga is stuck at a given instant, why, and how long it has waited for its next step. */
export interface StuckVerdict {
  stuck: boolean;
  reason: StuckReason | null;
  /** How long the saga has waited for its next step (0 when it waits for nothing). */
  waitedMs: number;
  /** When it becomes (or became) stuck if nothing happens; null for an ended saga. */
  deadline: Date | null;
}

/** The step timeouts every wait step must have: a missing one is a configuration error, not "never". */
export function stepTimeouts(steps: Record<WaitStep, number>): Record<WaitStep, number> {
  for (const step of Object.keys(WAIT_STEPS) as WaitStep[])
    if (!Number.isFinite(steps[step]) || steps[step] <= 0) throw new Error(`no timeout for step ${step}`);
  return steps;
}

/**
 * A saga is stuck when it has not ended and either its next step is overdue (per-step timeout, counted from
 * the step that made it due) or the whole saga is older than the overall timeout.
 */
export function stuckVerdict(
  state: Pick<SagaState, 'terminal' | 'startedAt' | 'waitingFor'>,
  now: Date,
  timeouts: StuckTimeouts,
): StuckVerdict {
  const waitedMs = state.waitingFor ? Math.max(0, now.getTime() - state.waitingFor.since.getTime()) : 0;
  if (state.terminal) return { stuck: false, reason: null, waitedMs, deadline: null };
  const overall = state.startedAt.getTime() + timeouts.overallMs;
  const step = state.waitingFor
    ? state.waitingFor.since.getTime() + timeouts.steps[state.waitingFor.step]
    : Number.POSITIVE_INFINITY;
  const deadline = Math.min(overall, step);
  if (now.getTime() < deadline) return { stuck: false, reason: null, waitedMs, deadline: new Date(deadline) };
  return {
    stuck: true,
    reason: step <= overall ? 'step-timeout' : 'overall-timeout',
    waitedMs,
    deadline: new Date(deadline),
  };
}
