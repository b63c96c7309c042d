import { Consumer, KafkaMessage, Producer } from 'kafkajs';
import { DataSource, EntityManager } from 'typeorm';
import { Registry } from 'prom-client';
import { ContractViolation, EventType, SagaEvent, parseEvent } from '@checkout/contracts';
import {
  DeadLetters,
  DlqReason,
  HandlerGaveUp,
  HandlerRetry,
  Heartbeat,
  databaseAnswers,
} from './dead-letter';
import { NonRetryableError } from './errors';
import { FETCH_MAX_WAIT_MS } from './event-consumer';
import { KafkaSecurity, createKafka } from './kafka';
import { Logger } from './logger';
import { consumedCounter } from './metrics';

/** Applies a batch of new events (inbox rows already written) inside the one transaction they commit in. */
export type BatchEventHandler<T extends EventType> = (
  events: SagaEvent<T>[],
  tx: EntityManager,
) => Promise<void>;

/** Settings of one batch consumer. */
export interface BatchEventConsumerOptions<T extends EventType> {
  topic: T;
  /** Kafka consumer group. */
  groupId: string;
  /** Inbox consumer name: the same as the per-event consumer's, so an event either one applied is a duplicate. */
  inboxName: string;
  /** On first start (no committed offsets yet), continue from this group's offsets instead of the beginning. */
  takeOverFrom?: string;
  brokers: string[];
  /** TLS and SASL of a secured cluster (from the service config). */
  security?: KafkaSecurity;
  dataSource: DataSource;
  handler: BatchEventHandler<T>;
  /** Events applied in one transaction at most. */
  batchSize: number;
  logger: Logger;
  registry?: Registry;
  maxAttempts?: number;
  backoff?: { initialMs: number; maxMs: number };
  partitionsConsumedConcurrently?: number;
  /** Called when the consumer stopped for good (a crash kafkajs will not restart from). */
  onFatal?: (reason: string) => void;
  /** Runs each chunk's transaction inside a context (e.g. the trace of a chunk's only event). */
  around?: <R>(events: SagaEvent<T>[], fn: () => Promise<R>) => Promise<R>;
}

/**
 * The batched twin of EventConsumer for one topic (group commit): a Kafka batch is cut
 * into chunks of batchSize and each chunk is validated, recorded in the inbox and applied in ONE transaction.
 * While the database is away a chunk waits as a whole (HandlerRetry). If a chunk fails for its own reason (a
 * poison event, a broken rule), every event of it is applied alone with the per-event runtime's semantics
 * (retries with backoff, NonRetryableError straight to `<topic>.dlq`), so one bad event
 * never holds back or takes down the others. Offsets are resolved only after a chunk has committed.
 */
export class BatchEventConsumer<T extends EventType> {
  private readonly kafka: ReturnType<typeof createKafka>;
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private readonly deadLetters: DeadLetters;
  private running = false;
  /** A chunk: a few attempts as a whole, then its events one by one. */
  private readonly chunkRetry: HandlerRetry;
  /** One event alone: the per-event runtime's semantics. */
  private readonly aloneRetry: HandlerRetry;

  constructor(private readonly options: BatchEventConsumerOptions<T>) {
    this.kafka = createKafka(options.brokers, `${options.groupId}-consumer`, options.security);
    this.consumer = this.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      retry: { retries: 10 },
    });
    this.producer = this.kafka.producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    this.deadLetters = new DeadLetters(this.producer, options.inboxName, options.logger);
    const retry = (maxAttempts: number) =>
      new HandlerRetry({
        maxAttempts,
        backoff: options.backoff ?? { initialMs: 200, maxMs: 5_000 },
        running: () => this.running,
        databaseHealthy: () => databaseAnswers((q) => options.dataSource.query(q)),
        logger: options.logger,
        consumer: options.groupId,
      });
    this.chunkRetry = retry(3);
    this.aloneRetry = retry(options.maxAttempts ?? 5);
  }

  /** Connects, takes over the previous group's offsets if this group has none, and starts consuming. */
  async start(): Promise<void> {
    await this.takeOverOffsets();
    await this.producer.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.options.topic], fromBeginning: true });
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      const reason = String(payload.error);
      this.options.logger.error(
        { consumer: this.options.groupId, err: reason, restart: payload.restart },
        'consumer crashed',
      );
      if (!payload.restart && this.running) this.options.onFatal?.(reason);
    });
    this.running = true;
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 3,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let i = 0; i < batch.messages.length; i += this.options.batchSize) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(i, i + this.options.batchSize);
          await this.processChunk(batch.partition, chunk, heartbeat);
          resolveOffset(chunk[chunk.length - 1].offset);
          await heartbeat();
        }
      },
    });
  }

  /** Stops fetching, lets the in-flight chunk finish, commits offsets and disconnects. */
  async stop(): Promise<void> {
    this.running = false;
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }

  /**
   * Validates, dedupes and applies one chunk of one partition; exported behaviour is each message's outcome.
   * While the database is away the chunk waits (heartbeating), as a whole; it is split only for errors of its own.
   */
  async processChunk(partition: number, messages: KafkaMessage[], heartbeat?: Heartbeat): Promise<void> {
    const parsed: { event: SagaEvent<T>; message: KafkaMessage }[] = [];
    for (const message of messages) {
      try {
        const event = parseEvent(message.value?.toString('utf8') ?? '');
        if (event.type !== this.options.topic)
          throw new ContractViolation(
            'CONTRACT.INVALID_ENVELOPE',
            `event of type ${event.type} on topic ${this.options.topic}`,
          );
        parsed.push({ event: event as SagaEvent<T>, message });
      } catch (error) {
        if (!(error instanceof ContractViolation)) throw error;
        await this.park(partition, message, { code: error.code, reason: error.message, attempts: 0 });
      }
    }
    if (parsed.length === 0) return;
    try {
      await this.chunkRetry.execute(() => this.apply(parsed.map((p) => p.event)), heartbeat);
    } catch (error) {
      if (!(error instanceof HandlerGaveUp)) throw error; // shutting down or rebalanced: leave it uncommitted
      for (const p of parsed) await this.processAlone(partition, p.event, p.message, heartbeat);
    }
  }

  private async processAlone(
    partition: number,
    event: SagaEvent<T>,
    message: KafkaMessage,
    heartbeat?: Heartbeat,
  ): Promise<void> {
    try {
      await this.aloneRetry.execute(() => this.apply([event]), heartbeat);
    } catch (error) {
      if (!(error instanceof HandlerGaveUp)) throw error;
      const cause = error.error;
      const code = cause instanceof NonRetryableError ? cause.code : 'HANDLER_FAILED';
      this.options.logger.error(
        {
          consumer: this.options.inboxName,
          eventId: event.eventId,
          type: event.type,
          sagaId: event.sagaId,
          attempts: error.attempts,
          err: String(cause),
        },
        'event parked on the DLQ',
      );
      await this.park(partition, message, { code, reason: error.message, attempts: error.attempts });
    }
  }

  /** Inbox rows and the handler in one transaction; events already in the inbox (or twice in the chunk) are skipped. */
  async apply(events: SagaEvent<T>[]): Promise<{ applied: number; duplicates: number }> {
    const run = () =>
      this.options.dataSource.transaction(async (tx) => {
        const inserted: { event_id: string }[] = await tx.query(
          `INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id)
         SELECT $1, e.id, e.type, e.tenant_id, e.saga_id
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[]) AS e(id, type, tenant_id, saga_id)
         ON CONFLICT DO NOTHING RETURNING event_id`,
          [
            this.options.inboxName,
            events.map((e) => e.eventId),
            events.map((e) => e.type),
            events.map((e) => e.tenantId),
            events.map((e) => e.sagaId),
          ],
        );
        const isNew = new Set(inserted.map((r) => r.event_id));
        const toApply = events.filter((e) => isNew.delete(e.eventId.toLowerCase()));
        if (toApply.length > 0) await this.options.handler(toApply, tx);
        return toApply;
      });
    const fresh = await (this.options.around ? this.options.around(events, run) : run());
    this.count('applied', fresh.length);
    this.count('duplicate', events.length - fresh.length);
    return { applied: fresh.length, duplicates: events.length - fresh.length };
  }

  private async takeOverOffsets(): Promise<void> {
    const { takeOverFrom, groupId, topic } = this.options;
    if (!takeOverFrom) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const [mine] = await admin.fetchOffsets({ groupId, topics: [topic] });
      if (mine.partitions.some((p) => p.offset !== '-1')) return;
      const [previous] = await admin.fetchOffsets({ groupId: takeOverFrom, topics: [topic] });
      const partitions = previous.partitions.filter((p) => p.offset !== '-1');
      if (partitions.length === 0) return;
      await admin.setOffsets({ groupId, topic, partitions });
      this.options.logger.info(
        { groupId, takeOverFrom, topic, partitions },
        'batch consumer continues from the previous group',
      );
    } finally {
      await admin.disconnect();
    }
  }

  private async park(partition: number, message: KafkaMessage, why: DlqReason): Promise<void> {
    await this.deadLetters.park(this.options.topic, partition, message, why);
    this.count('dlq', 1);
  }

  /** The per-event runtime's counter (messaging_consumed_total), so dashboards see both paths alike. */
  private count(outcome: 'applied' | 'duplicate' | 'dlq', n: number): void {
    if (n === 0) return;
    const counter = this.options.registry && consumedCounter(this.options.registry);
    counter?.inc({ consumer: this.options.inboxName, type: this.options.topic, outcome }, n);
  }
}
