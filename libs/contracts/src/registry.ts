import { z } from 'zod';
import { Envelope, RawEnvelope, envelopeOf } from './envelope';
import { ErrorCode } from './errors';
import { FulfillmentApologyVoucherIssuedV1 } from './events/fulfillment-apology-voucher-issued.v1';
import { FulfillmentShipmentCancelledV1 } from './events/fulfillment-shipment-cancelled.v1';
import { FulfillmentShipmentCreatedV1 } from './events/fulfillment-shipment-created.v1';
import { FulfillmentShipmentFailedV1 } from './events/fulfillment-shipment-failed.v1';
import { InventoryBackorderedV1 } from './events/inventory-backordered.v1';
import { InventoryCommittedV1 } from './events/inventory-committed.v1';
import { InventoryRejectedV1 } from './events/inventory-rejected.v1';
import { InventoryReleasedV1 } from './events/inventory-released.v1';
import { InventoryReservedV1 } from './events/inventory-reserved.v1';
import { InventoryUnavailableAfterPaymentV1 } from './events/inventory-unavailable-after-payment.v1';
import { OrderCancelledV1 } from './events/order-cancelled.v1';
import { OrderCreatedV1 } from './events/order-created.v1';
import { OrderPaidV1 } from './events/order-paid.v1';
import { PaymentFailedV1 } from './events/payment-failed.v1';
import { PaymentRefundedV1 } from './events/payment-refunded.v1';
import { PaymentSucceededV1 } from './events/payment-succeeded.v1';

/** Every saga event: type -> payload schema of each version. The topic name is the type. */
export const EVENT_SCHEMAS = {
  'order.created': { 1: OrderCreatedV1 },
  'order.paid': { 1: OrderPaidV1 },
  'order.cancelled': { 1: OrderCancelledV1 },
  'inventory.reserved': { 1: InventoryReservedV1 },
  'inventory.rejected': { 1: InventoryRejectedV1 },
  'inventory.released': { 1: InventoryReleasedV1 },
  'inventory.committed': { 1: InventoryCommittedV1 },
  'inventory.backordered': { 1: InventoryBackorderedV1 },
  'inventory.unavailable-after-payment': { 1: InventoryUnavailableAfterPaymentV1 },
  'payment.succeeded': { 1: PaymentSucceededV1 },
  'payment.failed': { 1: PaymentFailedV1 },
  'payment.refunded': { 1: PaymentRefundedV1 },
  'fulfillment.shipment-created': { 1: FulfillmentShipmentCreatedV1 },
  'fulfillment.shipment-failed': { 1: FulfillmentShipmentFailedV1 },
  'fulfillment.shipment-cancelled': { 1: FulfillmentShipmentCancelledV1 },
  'fulfillment.apology-voucher-issued': { 1: FulfillmentApologyVoucherIssuedV1 },
} as const satisfies Record<string, Record<number, z.ZodType>>;

/** A saga event type, which is also its Kafka topic. */
export type EventType = keyof typeof EVENT_SCHEMAS;

/** The latest payload type of an event type (v1 everywhere for now). */
export type PayloadOf<T extends EventType> = z.infer<(typeof EVENT_SCHEMAS)[T][1]>;

/** A fully typed event of type T. */
export type SagaEvent<T extends EventType = EventType> = Envelope<T, PayloadOf<T>>;

/** All saga topics. */
export const SAGA_TOPICS = Object.keys(EVENT_SCHEMAS) as EventType[];

/** The dead-letter topic of a topic: where poison messages are parked with their reason. */
export const dlqTopic = (topic: string): string => `${topic}.dlq`;

/** Whether a string names a known event type. */
export const isEventType = (type: string): type is EventType => Object.hasOwn(EVENT_SCHEMAS, type);

/** Why an event could not be accepted: its CONTRACT.* DLQ code (errors.ts) and a readable reason. */
// Not a DomainError: an event a service fails to write itself is a bug (500 INTERNAL), not the client's error.
export class ContractViolation extends Error {
  constructor(
    readonly code: Extract<ErrorCode, `CONTRACT.${string}`>,
    message: string,
  ) {
    super(message);
    this.name = 'ContractViolation';
  }
}

const describe = (error: z.ZodError): string =>
  error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');

/** The full envelope schema of each type and version, built once: zod compiles a schema on its first parse. */
const ENVELOPE_SCHEMAS = new Map<string, z.ZodType>(
  Object.entries(EVENT_SCHEMAS).flatMap(([type, versions]) =>
    Object.entries(versions as Record<number, z.ZodType>).map(
      ([version, payload]) => [`${type}@${version}`, envelopeOf(type, Number(version), payload)] as const,
    ),
  ),
);

/** Validates an envelope object against the contract of its type and version; throws ContractViolation. */
export function validateEvent(value: unknown): SagaEvent {
  const { type, version } = (value ?? {}) as { type?: unknown; version?: unknown };
  const schema = ENVELOPE_SCHEMAS.get(`${String(type)}@${String(version)}`);
  const full = schema?.safeParse(value);
  if (full?.success) return full.data as SagaEvent;
  // The slow path, for a message that is not a valid event: say which part of it is wrong.
  const envelope = RawEnvelope.safeParse(value);
  if (!envelope.success) throw new ContractViolation('CONTRACT.INVALID_ENVELOPE', describe(envelope.error));
  if (!isEventType(envelope.data.type))
    throw new ContractViolation('CONTRACT.UNKNOWN_TYPE', `unknown event type ${envelope.data.type}`);
  if (!schema)
    throw new ContractViolation(
      'CONTRACT.UNKNOWN_TYPE',
      `unknown version ${envelope.data.version} of ${envelope.data.type}`,
    );
  throw new ContractViolation('CONTRACT.INVALID_PAYLOAD', describe(full!.error));
}

/** Parses a Kafka message value (JSON text of the envelope) and validates it; throws ContractViolation. */
export function parseEvent(text: string): SagaEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ContractViolation('CONTRACT.MALFORMED_JSON', (error as Error).message);
  }
  return validateEvent(value);
}

/** JSON Schema (draft 2020-12) of one event's full envelope, as published for consumer teams. */
export function jsonSchemaOf(type: EventType, version = 1): Record<string, unknown> {
  const versions: Record<number, z.ZodType> = EVENT_SCHEMAS[type];
  const schema = envelopeOf(type, version, versions[version]);
  return {
    $id: `https://checkout-saga.dev/schemas/${type}.v${version}.json`,
    title: `${type} v${version}`,
    ...z.toJSONSchema(schema, { target: 'draft-2020-12' }),
  };
}
