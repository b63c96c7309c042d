import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { EventType, PayloadOf, SagaEvent, validateEvent } from '@checkout/contracts';

/** What a handler says when it publishes: the rest of the envelope is filled in here. */
export interface NewEvent<T extends EventType> {
  type: T;
  tenantId: string;
  sagaId: string;
  payload: PayloadOf<T>;
  /** The event this one reacts to: gives causation, correlation and trace context. */
  cause?: SagaEvent;
  correlationId?: string;
  traceparent?: string | null;
  version?: number;
}

/** Supplies the current W3C traceparent (OpenTelemetry's active span), if any. */
export type TraceparentSource = () => string | null;

/**
 * Adds events to the outbox inside the caller's transaction, so the state change and its event commit or roll
 * back together. Debezium relays committed rows to Kafka; nothing here talks to Kafka.
 */
export class OutboxWriter {
  constructor(
    private readonly aggregateType: string,
    private readonly currentTraceparent: TraceparentSource = () => null,
  ) {}

  /** Validates the event against its contract and inserts it; returns the full envelope. */
  async append<T extends EventType>(manager: EntityManager, event: NewEvent<T>): Promise<SagaEvent<T>> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxWriter.append must run inside the transaction of the state change it publishes');
    }
    const [{ last_sequence: sequence }] = await manager.query(
      `INSERT INTO saga_sequence (saga_id, last_sequence) VALUES ($1, 1)
       ON CONFLICT (saga_id) DO UPDATE SET last_sequence = saga_sequence.last_sequence + 1
       RETURNING last_sequence`,
      [event.sagaId],
    );
    const envelope = validateEvent({
      eventId: randomUUID(),
      type: event.type,
      version: event.version ?? 1,
      occurredAt: new Date().toISOString(),
      tenantId: event.tenantId,
      sagaId: event.sagaId,
      correlationId: event.correlationId ?? event.cause?.correlationId ?? event.sagaId,
      causationId: event.cause?.eventId ?? null,
      traceparent: event.traceparent ?? this.currentTraceparent() ?? event.cause?.traceparent ?? null,
      sequence,
      payload: event.payload,
    }) as SagaEvent<T>;
    await manager.query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id,
                           causation_id, traceparent, sequence, payload, occurred_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        envelope.eventId,
        this.aggregateType,
        envelope.sagaId,
        envelope.type,
        envelope.version,
        envelope.tenantId,
        envelope.sagaId,
        envelope.correlationId,
        envelope.causationId,
        envelope.traceparent,
        envelope.sequence,
        JSON.stringify(envelope),
        envelope.occurredAt,
      ],
    );
    return envelope;
  }
}
