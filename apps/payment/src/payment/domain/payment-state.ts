import { PaymentState } from '@checkout/contracts';

export type { PaymentState };

/** Who told us: the synchronous PSP response, a webhook, reconciliation, or our own bookkeeping. */
export type TransitionSource = 'response' | 'webhook' | 'reconciliation' | 'charge' | 'refund';

/** States reconciliation asks the PSP about: the charge was sent, and no final answer is recorded yet. */
export const AWAITING_PSP_STATES: readonly PaymentState[] = ['pending', 'unknown'];

/** States in which the attempt's PSP charge captured the money (refunded: captured, then given back). */
export const CAPTURED_STATES: readonly PaymentState[] = ['succeeded', 'refunded'];

/**
 * The state machine, as "target state <- states it may be entered from". `unknown` exists so that nobody
 * treats a timeout as a failure: its only exits are answers from the PSP. Nothing leaves `failed`, and
 * `succeeded` only moves forward to `refunded`.
 */
export const ALLOWED_FROM: Readonly<Record<PaymentState, readonly PaymentState[]>> = {
  created: [],
  pending: ['created'],
  unknown: ['pending'],
  // Only the PSP's answer to a charge sent.
  succeeded: AWAITING_PSP_STATES,
  // From created only before the PSP was ever asked: the order was cancelled first.
  failed: ['created', ...AWAITING_PSP_STATES],
  refunded: ['succeeded'],
};

/** What a transition did: `applied` moved the row, `ignored` found it in a state the move is not allowed from. */
export type TransitionOutcome = 'applied' | 'ignored';

/** Whether `to` may be entered from `from`. */
export const canTransition = (from: PaymentState, to: PaymentState): boolean =>
  ALLOWED_FROM[to].includes(from);

/** States in which the money's fate is not yet known to us. */
export const OPEN_STATES: readonly PaymentState[] = ['created', ...AWAITING_PSP_STATES];

/** Replays a sequence of requested moves from a state, as the database would: for reasoning and tests. */
export function replay(
  start: PaymentState,
  moves: readonly PaymentState[],
): { state: PaymentState; outcomes: TransitionOutcome[] } {
  let state = start;
  const outcomes: TransitionOutcome[] = [];
  for (const to of moves) {
    if (canTransition(state, to)) {
      state = to;
      outcomes.push('applied');
    } else outcomes.push('ignored');
  }
  return { state, outcomes };
}
