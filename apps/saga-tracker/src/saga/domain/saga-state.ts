import { EventType, ORDER_STATUSES, OrderStatus, SagaWaitStep, isTerminalStatus } from '@checkout/contracts';
import { OUTCOME_OF, SagaService, StepFacts, StepOutcome } from './saga-step';

export { ORDER_STATUSES };
export type { OrderStatus };

/**
 * The status an event moves the order to and the statuses it may move it from: the order's own forward-only
 * state machine, so that a late or duplicated event changes nothing here either. `order.paid` and
 * `order.cancelled` are the order's own word; the others are the events the order reacts to.
 */
const STATUS_EFFECT: Partial<Record<EventType, { to: OrderStatus; from: readonly OrderStatus[] }>> = {
  'inventory.reserved': { to: 'AWAITING_PAYMENT', from: ['PENDING'] },
  'inventory.rejected': { to: 'REJECTED', from: ['PENDING'] },
  'inventory.backordered': { to: 'BACKORDERED', from: ['PENDING', 'AWAITING_PAYMENT'] },
  // BACKORDERED too: a restock filled the backorder.
  'order.paid': { to: 'PAID', from: ['PENDING', 'AWAITING_PAYMENT', 'BACKORDERED'] },
  'payment.failed': { to: 'CANCELLED', from: ['PENDING', 'AWAITING_PAYMENT'] },
  'order.cancelled': { to: 'CANCELLED', from: ['PENDING', 'AWAITING_PAYMENT'] },
  'fulfillment.shipment-created': { to: 'SHIPPED', from: ['PAID', 'BACKORDERED'] },
  'payment.refunded': {
    to: 'REFUNDED',
    from: ['PENDING', 'AWAITING_PAYMENT', 'PAID', 'BACKORDERED', 'CANCELLED', 'SHIPPED'],
  },
};

/** What a saga can be waiting for, the service expected to act, and whether it is a compensation. */
export const WAIT_STEPS = {
  reservation: { service: 'inventory', compensation: false },
  payment: { service: 'payment', compensation: false },
  'stock-commit': { service: 'inventory', compensation: false },
  'order-paid': { service: 'order', compensation: false },
  shipment: { service: 'fulfillment', compensation: false },
  'order-cancel': { service: 'order', compensation: true },
  refund: { service: 'payment', compensation: true },
  'stock-release': { service: 'inventory', compensation: true },
  'shipment-cancel': { service: 'fulfillment', compensation: true },
} as const satisfies Record<SagaWaitStep, { service: SagaService; compensation: boolean }>;
export type WaitStep = keyof typeof WAIT_STEPS;

/** One recorded event of a saga, as the tracker stores it. */
export interface SagaStep {
  eventId: string;
  type: EventType;
  service: SagaService;
  occurredAt: Date;
  recordedAt: Date;
  causationId: string | null;
  traceparent: string | null;
  outcome: StepOutcome;
  facts: StepFacts;
}

/** The next step a saga waits for, and since when (the time of the step that made it due). */
export interface Waiting {
  step: WaitStep;
  service: SagaService;
  compensation: boolean;
  since: Date;
}

/** A saga's state as derived from its steps. */
export interface SagaState {
  status: OrderStatus;
  /**
   * Nothing more is expected: every step so far is known (the saga is complete), the order is in a terminal
   * status and no compensation is outstanding.
   */
  terminal: boolean;
  /** Whether order.created was seen (it may arrive after later steps: the topics are consumed in parallel). */
  started: boolean;
  /** Steps whose cause (causationId) has not been recorded yet: arrived before the step they react to. */
  missingCauses: number;
  /** Started and no cause missing: the tracker has seen the whole saga up to its last step. */
  complete: boolean;
  startedAt: Date;
  lastStep: Pick<SagaStep, 'eventId' | 'type' | 'service' | 'occurredAt' | 'outcome'>;
  waitingFor: Waiting | null;
  /** When the saga last became terminal (the occurredAt of that step), or null. */
  terminalAt: Date | null;
  /** Whether any step undid an earlier one. */
  compensated: boolean;
  stepCount: number;
}

/**
 * Puts steps in saga order, whatever order they arrived in: by occurredAt, except that a step never comes
 * before the step it reacts to (causationId), so clock skew between services cannot invert cause and effect.
 * Duplicates (same eventId) are kept once.
 */
export function orderSteps(steps: readonly SagaStep[]): SagaStep[] {
  const byId = new Map<string, SagaStep>();
  for (const s of steps) if (!byId.has(s.eventId)) byId.set(s.eventId, s);
  const unique = [...byId.values()];
  const earlier = (a: SagaStep, b: SagaStep) =>
    a.occurredAt.getTime() - b.occurredAt.getTime() ||
    a.recordedAt.getTime() - b.recordedAt.getTime() ||
    a.eventId.localeCompare(b.eventId);
  const children = new Map<string, SagaStep[]>();
  const ready: SagaStep[] = [];
  for (const s of unique) {
    const cause = s.causationId && s.causationId !== s.eventId ? byId.get(s.causationId) : undefined;
    if (cause) children.set(cause.eventId, [...(children.get(cause.eventId) ?? []), s]);
    else ready.push(s);
  }
  const ordered: SagaStep[] = [];
  while (ready.length > 0) {
    ready.sort(earlier);
    const next = ready.shift()!;
    ordered.push(next);
    ready.push(...(children.get(next.eventId) ?? []));
  }
  // A causation cycle cannot come from honest producers; keep such steps rather than lose them.
  const placed = new Set(ordered.map((s) => s.eventId));
  return [...ordered, ...unique.filter((s) => !placed.has(s.eventId)).sort(earlier)];
}

/** What has been seen so far while folding the steps. */
interface Seen {
  status: OrderStatus;
  types: Map<EventType, SagaStep>;
  cancelledWithRefund: boolean;
}

const first = (seen: Seen, ...types: EventType[]): SagaStep | undefined =>
  types.map((t) => seen.types.get(t)).find((s) => s !== undefined);
const has = (seen: Seen, ...types: EventType[]) => first(seen, ...types) !== undefined;

const later = (a: SagaStep, b: SagaStep): SagaStep => (a.occurredAt > b.occurredAt ? a : b);

const waiting = (step: WaitStep, since: SagaStep): Waiting => ({
  step,
  service: WAIT_STEPS[step].service,
  compensation: WAIT_STEPS[step].compensation,
  since: since.occurredAt,
});

/** The outstanding step, compensations first: they are what an unserved, charged customer is waiting for. */
function waitingFor(seen: Seen): Waiting | null {
  const paid = seen.types.get('payment.succeeded');
  const refunded = has(seen, 'payment.refunded');
  const refundCause = first(seen, 'inventory.unavailable-after-payment', 'fulfillment.shipment-failed');
  if (!refunded && refundCause) return waiting('refund', refundCause);
  if (!refunded && paid && seen.cancelledWithRefund)
    return waiting('refund', seen.types.get('order.cancelled')!);
  const shipped = seen.types.get('fulfillment.shipment-created');
  if (refunded && shipped && !has(seen, 'fulfillment.shipment-cancelled'))
    return waiting('shipment-cancel', seen.types.get('payment.refunded')!);
  const reserved = seen.types.get('inventory.reserved');
  // Paid stock is settled once inventory sold it, backordered it or refused it (a release is no answer).
  const stockSettled = has(
    seen,
    'inventory.committed',
    'inventory.backordered',
    'inventory.unavailable-after-payment',
  );
  // A decline moves the order to CANCELLED, and the order announces it (inventory and payment react to that).
  const declined = seen.types.get('payment.failed');
  if (seen.status === 'CANCELLED' && declined && !has(seen, 'order.cancelled'))
    return waiting('order-cancel', declined);
  if (seen.status === 'CANCELLED' && reserved && !paid && !stockSettled && !has(seen, 'inventory.released')) {
    const cause = first(seen, 'payment.failed', 'order.cancelled')!;
    return waiting('stock-release', cause);
  }
  switch (seen.status) {
    case 'PENDING': {
      // Payment may be heard of before the reservation: the topics are consumed in parallel.
      if (paid && !stockSettled) return waiting('stock-commit', paid);
      const committed = seen.types.get('inventory.committed');
      if (paid && committed) return waiting('order-paid', later(paid, committed));
      return waiting('reservation', seen.types.get('order.created') ?? [...seen.types.values()][0]);
    }
    case 'AWAITING_PAYMENT': {
      if (!paid) return waiting('payment', reserved!);
      if (!stockSettled) return waiting('stock-commit', paid);
      const committed = seen.types.get('inventory.committed');
      if (committed) return waiting('order-paid', later(paid, committed));
      return null;
    }
    case 'PAID':
      if (shipped || has(seen, 'fulfillment.shipment-failed')) return null;
      return waiting('shipment', seen.types.get('order.paid')!);
    default:
      return null;
  }
}

/**
 * Derives a saga's state from its steps (any arrival order, duplicates allowed): the order status the order
 * service would show, what the saga waits for next, whether it has ended, and when.
 */
export function deriveSagaState(steps: readonly SagaStep[]): SagaState {
  const ordered = orderSteps(steps);
  if (ordered.length === 0) throw new Error('a saga has at least one step');
  const seen: Seen = { status: 'PENDING', types: new Map(), cancelledWithRefund: false };
  const known = new Set(ordered.map((s) => s.eventId));
  const hasMissingCause = (s: SagaStep) => s.causationId !== null && !known.has(s.causationId);
  let terminalAt: Date | null = null;
  let wait: Waiting | null = null;
  let missingSoFar = 0;
  for (const step of ordered) {
    if (!seen.types.has(step.type)) seen.types.set(step.type, step);
    if (hasMissingCause(step)) missingSoFar += 1;
    const effect = STATUS_EFFECT[step.type];
    if (effect && effect.from.includes(seen.status)) {
      seen.status = effect.to;
      if (step.type === 'order.cancelled') seen.cancelledWithRefund = step.facts.refundIfCharged === true;
    }
    wait = waitingFor(seen);
    // A saga seen only in part (its first step or a cause still in flight) may look ended but is not yet.
    const complete = seen.types.has('order.created') && missingSoFar === 0;
    const ended = complete && isTerminalStatus(seen.status) && wait === null;
    if (!ended) terminalAt = null;
    else if (terminalAt === null) terminalAt = step.occurredAt;
  }
  const last = ordered[ordered.length - 1];
  const created = seen.types.get('order.created');
  return {
    status: seen.status,
    terminal: terminalAt !== null,
    started: created !== undefined,
    missingCauses: missingSoFar,
    complete: created !== undefined && missingSoFar === 0,
    startedAt: (created ?? ordered[0]).occurredAt,
    lastStep: {
      eventId: last.eventId,
      type: last.type,
      service: last.service,
      occurredAt: last.occurredAt,
      outcome: last.outcome,
    },
    waitingFor: wait,
    terminalAt,
    compensated: ordered.some((s) => OUTCOME_OF[s.type] === 'compensation'),
    stepCount: ordered.length,
  };
}
