import { z } from 'zod';
import { OrderId, TenantId, Timestamp, Traceparent } from './primitives';

/** Fields every event carries, whatever its payload (docs/asyncapi.yaml). */
export const EnvelopeFields = {
  eventId: z.uuid(),
  type: z.string().regex(/^[a-z]+\.[a-z-]+$/),
  version: z.number().int().min(1),
  occurredAt: Timestamp,
  tenantId: TenantId,
  /** = orderId: every event of one checkout shares it. */
  sagaId: OrderId,
  correlationId: z.string().min(1).max(255),
  /** The eventId this event reacts to; null for the first event of a saga. */
  causationId: z.uuid().nullable(),
  traceparent: Traceparent.nullable(),
  /** Per-saga, per-producer sequence number, so a consumer can see a gap or a reordering. */
  sequence: z.number().int().min(1),
};

/** The envelope with an untyped payload: what a consumer can check before it knows the event. */
export const RawEnvelope = z.object({ ...EnvelopeFields, payload: z.unknown() });
export type RawEnvelope = z.infer<typeof RawEnvelope>;

/** Builds the envelope schema of one event type and version around its payload schema. */
export function envelopeOf<T extends string, V extends number, P extends z.ZodType>(
  type: T,
  version: V,
  payload: P,
) {
  return z.object({ ...EnvelopeFields, type: z.literal(type), version: z.literal(version), payload });
}

/** An envelope whose payload is of type P. */
export type Envelope<T extends string = string, P = unknown> = Omit<RawEnvelope, 'type' | 'payload'> & {
  type: T;
  payload: P;
};
