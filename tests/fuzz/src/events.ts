import fc from 'fast-check';
import { EventType, SAGA_TOPICS, validateEvent } from '@checkout/contracts';
import { orderCreatedPayload, rawSagaEvent } from '@checkout/testing';
import { mutated } from './arbitraries';

/** The services that consume each saga topic (their @EventPattern methods; the saga tracker reads them all). */
export const CONSUMERS: Record<EventType, readonly string[]> = Object.fromEntries(
  SAGA_TOPICS.map((t) => [t, ['saga-tracker']]),
) as unknown as Record<EventType, readonly string[]>;
const add = (service: string, topics: EventType[]) => {
  for (const t of topics) CONSUMERS[t] = [...CONSUMERS[t], service];
};
add('inventory', [
  'order.created',
  'order.cancelled',
  'payment.failed',
  'payment.succeeded',
  'fulfillment.shipment-failed',
]);
add('order', [
  'inventory.reserved',
  'inventory.rejected',
  'inventory.released',
  'inventory.committed',
  'inventory.backordered',
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'fulfillment.shipment-created',
  'fulfillment.apology-voucher-issued',
]);
add('payment', [
  'inventory.reserved',
  'inventory.unavailable-after-payment',
  'fulfillment.shipment-failed',
  'order.cancelled',
]);
add('fulfillment', [
  'order.created',
  'payment.failed',
  'inventory.unavailable-after-payment',
  'order.paid',
  'payment.refunded',
]);

/** One message to publish: its key marks it, so its dead letters can be told apart from everyone else's. */
export interface PoisonMessage {
  key: string;
  value: Buffer;
  /** What kind of poison it is, for failure messages. */
  kind: string;
}

const isInvalid = (value: unknown): boolean => {
  try {
    validateEvent(value);
    return false;
  } catch {
    return true;
  }
};

/**
 * Messages no consumer may apply on `topic`: bytes that are not JSON, JSON that is not an envelope, an envelope
 * whose payload breaks the schema (a valid order.created mutated field by field), an event of another type, and
 * a well-formed event of a tenant this deployment does not serve or whose sagaId is not its order.
 */
export function poison(topic: EventType): fc.Arbitrary<PoisonMessage> {
  const key = fc.uuid();
  const sample = orderCreatedPayload({ orderId: '00000000-0000-4000-8000-000000000000' });
  const text = (kind: string, value: fc.Arbitrary<unknown>) =>
    fc.tuple(key, value).map(([k, v]) => ({ key: k, kind, value: Buffer.from(JSON.stringify(v) ?? 'null') }));
  const kinds: fc.Arbitrary<PoisonMessage>[] = [
    fc.tuple(key, fc.uint8Array({ minLength: 1, maxLength: 200 })).map(([k, b]) => ({
      key: k,
      kind: 'bytes',
      value: Buffer.from(b),
    })),
    text('json', fc.jsonValue({ maxDepth: 3 })),
    text(
      'payload',
      fc
        .tuple(fc.uuid(), mutated({ ...sample, orderId: undefined }))
        .map(([id, payload]) => rawSagaEvent(topic, 'acme', id, { orderId: id, ...(payload as object) }))
        .filter(isInvalid),
    ),
    text(
      'envelope',
      fc
        .tuple(fc.uuid(), mutated(rawSagaEvent(topic, 'acme', sample.orderId, sample)))
        .map(([, e]) => e)
        .filter(isInvalid),
    ),
    text(
      'other-type',
      fc
        .tuple(fc.uuid(), fc.constantFrom(...SAGA_TOPICS.filter((t) => t !== topic)))
        .map(([id, other]) => rawSagaEvent(other, 'acme', id, { orderId: id })),
    ),
  ];
  if (topic === 'order.created')
    kinds.push(
      text(
        'unknown-tenant',
        fc
          .uuid()
          .map((id) => rawSagaEvent(topic, 'no-such-tenant', id, orderCreatedPayload({ orderId: id }))),
      ),
      text(
        'saga-mismatch',
        fc.tuple(fc.uuid(), fc.uuid()).map(([id, other]) => ({
          ...rawSagaEvent(topic, 'acme', id, orderCreatedPayload({ orderId: id })),
          sagaId: other,
        })),
      ),
    );
  return fc.oneof(...kinds);
}
