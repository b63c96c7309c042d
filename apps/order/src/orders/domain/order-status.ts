import { OrderStatus, PaymentState } from '@checkout/contracts';

export type { OrderStatus, PaymentState };

/**
 * The order state machine: for each target status, the statuses it may be entered from. Every transition is
 * a conditional update on this set, so a duplicate or late event finds the order elsewhere and changes nothing.
 */
export const ORDER_TRANSITIONS: Record<Exclude<OrderStatus, 'PENDING'>, readonly OrderStatus[]> = {
  AWAITING_PAYMENT: ['PENDING'],
  REJECTED: ['PENDING'],
  // PENDING too: inventory.reserved may be consumed after inventory.committed (different topics).
  // BACKORDERED too: a restock filled the backorder (inventory.committed), the order is paid and ships.
  PAID: ['PENDING', 'AWAITING_PAYMENT', 'BACKORDERED'],
  CANCELLED: ['PENDING', 'AWAITING_PAYMENT'],
  BACKORDERED: ['PENDING', 'AWAITING_PAYMENT'],
  SHIPPED: ['PAID', 'BACKORDERED'],
  // Money came back: the end of any order that was (or may have been) charged.
  REFUNDED: ['PENDING', 'AWAITING_PAYMENT', 'PAID', 'BACKORDERED', 'CANCELLED', 'SHIPPED'],
};

/** For each payment state, the mirrored states it may replace (null = nothing heard yet). */
export const PAYMENT_TRANSITIONS: Record<PaymentState, readonly (PaymentState | null)[]> = {
  created: [null],
  pending: [null, 'created'],
  unknown: [null, 'created', 'pending'],
  succeeded: [null, 'created', 'pending', 'unknown'],
  failed: [null, 'created', 'pending', 'unknown'],
  // payment.refunded may overtake payment.succeeded on another topic.
  refunded: [null, 'created', 'pending', 'unknown', 'succeeded'],
};

/** Whether the state machine allows moving from one status to another. */
export const canTransition = (from: OrderStatus, to: OrderStatus): boolean =>
  to !== 'PENDING' && ORDER_TRANSITIONS[to].includes(from);

/** Whether the mirrored payment state may move from one value to another. */
export const canMovePayment = (from: PaymentState | null, to: PaymentState): boolean =>
  PAYMENT_TRANSITIONS[to].includes(from);

/** Payment states that end the customer's right to cancel: the money was taken. */
export const CANCEL_BLOCKING_PAYMENTS: readonly PaymentState[] = ['succeeded', 'refunded'];

/** A customer may cancel until the payment has succeeded. */
export const customerMayCancel = (status: OrderStatus, payment: PaymentState | null): boolean =>
  ORDER_TRANSITIONS.CANCELLED.includes(status) &&
  (payment === null || !CANCEL_BLOCKING_PAYMENTS.includes(payment));

/** When a cancelled order may still have been charged, payment must refund it (anything but a known failure). */
export const refundIfCharged = (payment: PaymentState | null): boolean => payment !== 'failed';
