import { EventType, SAGA_SERVICES, SAGA_TOPICS, STEP_OUTCOMES } from '@checkout/contracts';

// The lists are part of the tracker's HTTP contract (libs/contracts/src/http/saga-tracker.ts).
export { SAGA_SERVICES, STEP_OUTCOMES };
/** The services that take part in the saga, in the order a checkout meets them (one lane each on the page). */
export type SagaService = (typeof SAGA_SERVICES)[number];
/** What a step means for the saga: it moves forward, undoes an earlier step, reports a failure, or ends it. */
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

/**
 * The outcome class of every saga event. `terminal` is a step that ends the saga by itself (shipped,
 * backordered); a failure may end it too (rejected) or start compensations (declined -> release, refund).
 * The unit spec checks that every type of the contracts registry is classified.
 */
const OUTCOME_TABLE: Record<string, StepOutcome> = {
  'order.created': 'progress',
  'order.paid': 'progress',
  'order.cancelled': 'compensation',
  'inventory.reserved': 'progress',
  'inventory.rejected': 'failure',
  'inventory.released': 'compensation',
  'inventory.committed': 'progress',
  'inventory.backordered': 'terminal',
  'inventory.unavailable-after-payment': 'failure',
  'payment.succeeded': 'progress',
  'payment.failed': 'failure',
  'payment.refunded': 'compensation',
  'fulfillment.shipment-created': 'terminal',
  'fulfillment.shipment-failed': 'failure',
  'fulfillment.shipment-cancelled': 'compensation',
  // The apology to a customer who paid for stock that was gone: part of making up for the failure.
  'fulfillment.apology-voucher-issued': 'compensation',
};

/** The outcome class of each event type of the registry. */
export const OUTCOME_OF = OUTCOME_TABLE as Record<EventType, StepOutcome>;

/** The service that publishes an event type: its prefix (`inventory.reserved` -> inventory). */
export function serviceOf(type: EventType): SagaService {
  const prefix = type.slice(0, type.indexOf('.'));
  if (!(SAGA_SERVICES as readonly string[]).includes(prefix))
    throw new Error(`event type ${type} names no saga service`);
  return prefix as SagaService;
}

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or null. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '');
  return match && !/^0+$/.test(match[1]) ? match[1] : null;
}

/** The non-personal payload fields the timeline shows: why, which source told, what was short, the carrier. */
export interface StepFacts {
  reason?: string;
  source?: string;
  refundIfCharged?: boolean;
  reReserved?: boolean;
  shortSkus?: string[];
  carrier?: string;
  trackingNumber?: string;
}

/** Picks the step facts out of a (validated) payload: never the customer, the token or the amounts. */
export function factsOf(payload: unknown): StepFacts {
  const p = (payload ?? {}) as Record<string, unknown>;
  const facts: StepFacts = {};
  for (const key of ['reason', 'source', 'carrier', 'trackingNumber'] as const)
    if (typeof p[key] === 'string') facts[key] = p[key];
  for (const key of ['refundIfCharged', 'reReserved'] as const)
    if (typeof p[key] === 'boolean') facts[key] = p[key];
  if (Array.isArray(p.shortSkus)) facts.shortSkus = p.shortSkus.filter((x) => typeof x === 'string');
  return facts;
}

/** A short human-readable line of a step's facts for the timeline, or null when there is nothing to say. */
export function stepDetail(facts: StepFacts): string | null {
  const parts = [
    facts.reason,
    facts.shortSkus?.length ? `short: ${facts.shortSkus.join(', ')}` : undefined,
    facts.source && `via ${facts.source}`,
    facts.reReserved ? 're-reserved after expiry' : undefined,
    facts.refundIfCharged ? 'refund if charged' : undefined,
    facts.carrier && facts.trackingNumber ? `${facts.carrier} ${facts.trackingNumber}` : facts.carrier,
  ].filter((x): x is string => typeof x === 'string' && x.length > 0);
  return parts.length > 0 ? parts.join(', ').slice(0, 255) : null;
}

/** Every saga topic the tracker follows: the whole registry of libs/contracts. */
export const TRACKED_TYPES: readonly EventType[] = SAGA_TOPICS;
