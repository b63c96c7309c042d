import { REFUND_STATES, type RefundState } from '@checkout/contracts';

/** The states of one refund (the compensation of a charge), as the API shows them. */
export { REFUND_STATES, type RefundState };

/**
 * The refund's state machine, as "target state <- states it may be entered from" (docs/design/payment.md,
 * Refunds).
 */
export const REFUND_ALLOWED_FROM: Readonly<Record<RefundState, readonly RefundState[]>> = {
  pending: ['refund_failed'],
  succeeded: ['pending', 'refund_failed'],
  refund_failed: ['pending'],
};

/** Whether a refund may move from `from` to `to`. */
export const canMoveRefund = (from: RefundState, to: RefundState): boolean =>
  REFUND_ALLOWED_FROM[to].includes(from);
