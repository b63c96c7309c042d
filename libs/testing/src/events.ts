import { randomUUID } from 'node:crypto';
import { EventType, OrderCreatedV1, PayloadOf, SagaEvent, validateEvent } from '@checkout/contracts';

/** An order.created payload with sensible defaults, for tests. */
export function orderCreatedPayload(overrides: Partial<OrderCreatedV1> = {}): OrderCreatedV1 {
  const lines = overrides.lines ?? [
    { sku: 'SKU-1', quantity: 1, unitPrice: 50_000, discount: 0, lineTotal: 50_000 },
  ];
  const subtotal = lines.reduce((s, l) => s + l.unitPrice * l.quantity, 0);
  const discount = lines.reduce((s, l) => s + l.discount, 0);
  return {
    orderId: randomUUID(),
    customerId: 'c1',
    currency: 'VND',
    lines,
    subtotal,
    discount,
    total: subtotal - discount,
    voucherCode: null,
    paymentToken: 'tok_success',
    ...overrides,
  };
}

/** A validated event envelope of one order's saga, as its owning service would publish it, for tests. */
export function sagaEvent<T extends EventType>(
  type: T,
  tenantId: string,
  orderId: string,
  payload: PayloadOf<T>,
): SagaEvent<T> {
  return validateEvent(rawSagaEvent(type, tenantId, orderId, payload)) as SagaEvent<T>;
}

/** An envelope as JSON carries it, valid or not. */
export interface RawSagaEvent {
  eventId: string;
  type: string;
  tenantId: string;
  sagaId: string;
  payload: unknown;
  [field: string]: unknown;
}

/**
 * The same envelope, not validated and with any field overridden: what a buggy producer publishes (for the
 * specs of what consumers do with an invalid message).
 */
export function rawSagaEvent(
  type: string,
  tenantId: string,
  orderId: string,
  payload: unknown,
  overrides: Record<string, unknown> = {},
): RawSagaEvent {
  return {
    eventId: randomUUID(),
    type,
    version: 1,
    occurredAt: new Date().toISOString(),
    tenantId,
    sagaId: orderId,
    correlationId: orderId,
    causationId: null,
    traceparent: null,
    sequence: 1,
    payload,
    ...overrides,
  } as RawSagaEvent;
}

/**
 * A barrier for `parties` concurrent tasks: each awaits the returned function and all of them go on together,
 * once the last one has arrived (to line up racing transactions).
 */
export function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return () => {
    arrived += 1;
    if (arrived === parties) release();
    return open;
  };
}
