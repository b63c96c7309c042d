import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { EventType, PayloadOf, SagaEvent, validateEvent } from '@checkout/contracts';
import { sql } from './sql';

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
    requireTransaction(manager, 'append');
    // Validated with a stand-in sequence; the saga's next number is taken and written into the row and its
    // envelope by the same statement (one round trip per event).
    const envelope = this.envelope(event, 1, new Date().toISOString(), this.currentTraceparent());
    const [{ sequence }] = await manager.query(
      `WITH next AS (
         INSERT INTO saga_sequence (saga_id, last_sequence) VALUES ($12, 1)
         ON CONFLICT (saga_id) DO UPDATE SET last_sequence = saga_sequence.last_sequence + 1
         RETURNING last_sequence)
       INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id,
                           causation_id, traceparent, sequence, payload, occurred_at)
       SELECT $1, $2, $3, $4, $5, $6, $12, $7, $8, $9, next.last_sequence,
              jsonb_set($10::jsonb, '{sequence}', to_jsonb(next.last_sequence)), $11
         FROM next
       RETURNING sequence`,
      [
        envelope.eventId,
        this.aggregateType,
        envelope.sagaId,
        envelope.type,
        envelope.version,
        envelope.tenantId,
        envelope.correlationId,
        envelope.causationId,
        envelope.traceparent,
        JSON.stringify(envelope),
        envelope.occurredAt,
        envelope.sagaId,
      ],
    );
    envelope.sequence = sequence;
    return envelope as SagaEvent<T>;
  }

  /**
   * Takes the next saga sequence number of each saga, one per event that will be appended for it, in one
   * statement. A caller holding a hot row's lock calls it before taking the lock, so that appendAll then costs
   * one statement under the lock.
   */
  async takeSequences(tx: EntityManager, sagaIds: readonly string[]): Promise<Map<string, number[]>> {
    const perSaga = new Map<string, number>();
    for (const id of sagaIds) {
      const key = id.toLowerCase();
      perSaga.set(key, (perSaga.get(key) ?? 0) + 1);
    }
    if (perSaga.size === 0) return new Map();
    // One upsert per saga even when a saga has several events: ON CONFLICT cannot touch a row twice.
    const { rows } = await sql<{ saga_id: string; last_sequence: number }>(
      tx,
      `INSERT INTO saga_sequence AS s (saga_id, last_sequence)
       SELECT * FROM unnest($1::uuid[], $2::int[])
       ON CONFLICT (saga_id) DO UPDATE SET last_sequence = s.last_sequence + EXCLUDED.last_sequence
       RETURNING saga_id, last_sequence`,
      [[...perSaga.keys()], [...perSaga.values()]],
    );
    // The saga's events take the numbers just below its new last_sequence, in the order given.
    return new Map(
      rows.map((r) => {
        const n = perSaga.get(r.saga_id)!;
        return [r.saga_id, Array.from({ length: n }, (_, i) => r.last_sequence - n + 1 + i)];
      }),
    );
  }

  /**
   * append for many events in two statements (their sequence numbers, then every outbox row) instead of two per
   * event; returns the envelopes in order. Sequence numbers come from `taken` (takeSequences) where there are
   * any left for the saga, else are taken now.
   */
  async appendAll(
    tx: EntityManager,
    events: NewEvent<EventType>[],
    taken: Map<string, number[]> = new Map(),
  ): Promise<SagaEvent[]> {
    if (events.length === 0) return [];
    requireTransaction(tx, 'appendAll');
    const left = new Map([...taken].map(([k, v]) => [k, [...v]]));
    const budget = new Map<string, number>();
    const missing: string[] = [];
    for (const e of events) {
      const key = e.sagaId.toLowerCase();
      const used = (budget.get(key) ?? 0) + 1;
      budget.set(key, used);
      if (used > (left.get(key)?.length ?? 0)) missing.push(key);
    }
    for (const [key, numbers] of await this.takeSequences(tx, missing)) {
      left.set(key, [...(left.get(key) ?? []), ...numbers]);
    }
    const occurredAt = new Date().toISOString();
    const traceparent = this.currentTraceparent();
    const envelopes = events.map((event) =>
      this.envelope(event, left.get(event.sagaId.toLowerCase())!.shift()!, occurredAt, traceparent),
    );
    await sql(
      tx,
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id,
                           causation_id, traceparent, sequence, payload, occurred_at)
       SELECT e.id, $1, e.saga_id::text, e.type, e.version, e.tenant_id, e.saga_id, e.correlation_id,
              e.causation_id, e.traceparent, e.sequence, e.payload, e.occurred_at
         FROM unnest($2::uuid[], $3::text[], $4::int[], $5::text[], $6::uuid[], $7::text[], $8::uuid[], $9::text[],
                     $10::int[], $11::jsonb[], $12::timestamptz[])
           AS e(id, type, version, tenant_id, saga_id, correlation_id, causation_id, traceparent, sequence, payload,
                occurred_at)`,
      [
        this.aggregateType,
        envelopes.map((e) => e.eventId),
        envelopes.map((e) => e.type),
        envelopes.map((e) => e.version),
        envelopes.map((e) => e.tenantId),
        envelopes.map((e) => e.sagaId),
        envelopes.map((e) => e.correlationId),
        envelopes.map((e) => e.causationId),
        envelopes.map((e) => e.traceparent),
        envelopes.map((e) => e.sequence),
        envelopes.map((e) => JSON.stringify(e)),
        envelopes.map((e) => e.occurredAt),
      ],
    );
    return envelopes;
  }

  /** The full envelope of a new event, validated against its contract. */
  private envelope(
    event: NewEvent<EventType>,
    sequence: number,
    occurredAt: string,
    active: string | null,
  ): SagaEvent {
    return validateEvent({
      eventId: randomUUID(),
      type: event.type,
      version: event.version ?? 1,
      occurredAt,
      tenantId: event.tenantId,
      sagaId: event.sagaId,
      correlationId: event.correlationId ?? event.cause?.correlationId ?? event.sagaId,
      causationId: event.cause?.eventId ?? null,
      traceparent: event.traceparent ?? active ?? event.cause?.traceparent ?? null,
      sequence,
      payload: event.payload,
    });
  }
}

function requireTransaction(manager: EntityManager, method: string): void {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error(
      `OutboxWriter.${method} must run inside the transaction of the state change it publishes`,
    );
  }
}
