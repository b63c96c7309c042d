import { Consumer, KafkaMessage, Producer } from 'kafkajs';
import { DataSource, EntityManager } from 'typeorm';
import { Counter, Histogram, Registry } from 'prom-client';
import { consumedCounter, handlerDuration } from './metrics';
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
import { KafkaSecurity, createKafka } from './kafka';
import { Logger, consoleLogger } from './logger';

/** Applies one event inside the transaction in which its inbox row is recorded. */
export type EventHandler<T extends EventType = EventType> = (
  event: SagaEvent<T>,
  tx: EntityManager,
) => Promise<void>;

/** The handlers of one consumer, by event type (= topic). */
export type HandlerMap = { [T in EventType]?: EventHandler<T> };

/** Settings of one consumer. */
export interface EventConsumerOptions {
  /** Names the consumer group and the inbox rows: one per service and purpose, e.g. `inventory`. */
  name: string;
  brokers: string[];
  /** TLS and SASL of a secured cluster (from the service config). */
  security?: KafkaSecurity;
  dataSource: DataSource;
  handlers: HandlerMap;
  logger?: Logger;
  registry?: Registry;
  /**
   * Attempts of a handler failing for another reason than the infrastructure before the message is parked on
   * the DLQ (default 5); infrastructure errors are retried without limit.
   */
  maxAttempts?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Runs each handler call inside a context (e.g. continues the event's trace). */
  around?: <R>(event: SagaEvent, fn: () => Promise<R>) => Promise<R>;
  partitionsConsumedConcurrently?: number;
  /** Called when the consumer stopped for good (a crash kafkajs will not restart from). */
  onFatal?: (reason: string) => void;
  /** Called after each message with what happened to it (for trackers and tests). */
  onProcessed?: (outcome: Outcome, event: SagaEvent | null, message: KafkaMessage) => void;
}

/**
 * How long the broker holds a fetch that finds no message (kafkajs' `maxWaitTimeInMs`). A fetch returns as soon
 * as one message arrives (minBytes 1) and kafkajs only fetches when its workers are idle, so a long wait adds no
 * latency; a short one makes every idle consumer send a fetch (and the broker answer it) 10 times a second.
 * It bounds how long `stop()` waits for the fetch in flight and how late a heartbeat notices a rebalance.
 */
export const FETCH_MAX_WAIT_MS = 2_000;

/** What happened to one message. */
export type Outcome = 'applied' | 'duplicate' | 'dlq' | 'ignored';

/**
 * The Kafka consumer runtime: validate the event against libs/contracts, then in one DB transaction record
 * its id in the inbox and run the handler (a redelivered event is skipped); retry with backoff (HandlerRetry:
 * infrastructure errors without limit, the partition waiting for the database); park poison messages on
 * `<topic>.dlq` with the reason. `stop()` drains in-flight work and commits offsets.
 */
export class EventConsumer {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private readonly logger: Logger;
  private readonly deadLetters: DeadLetters;
  private readonly counter?: Counter<'consumer' | 'type' | 'outcome'>;
  private readonly duration?: Histogram<'consumer' | 'type'>;
  private running = false;
  private crashed: string | null = null;
  private readonly retry: HandlerRetry;

  constructor(private readonly options: EventConsumerOptions) {
    const kafka = createKafka(options.brokers, `${options.name}-consumer`, options.security);
    this.consumer = kafka.consumer({
      groupId: options.name,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      retry: { retries: 10 },
    });
    this.producer = kafka.producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    this.logger = options.logger ?? consoleLogger;
    this.deadLetters = new DeadLetters(this.producer, options.name, this.logger);
    this.retry = new HandlerRetry({
      maxAttempts: options.maxAttempts ?? 5,
      backoff: options.backoff ?? { initialMs: 200, maxMs: 5_000 },
      running: () => this.running,
      databaseHealthy: () => databaseAnswers((q) => options.dataSource.query(q)),
      logger: this.logger,
      consumer: options.name,
    });
    if (options.registry) {
      this.counter = consumedCounter(options.registry);
      this.duration = handlerDuration(options.registry);
    }
  }

  /** The topics this consumer reads: one per handled event type. */
  get topics(): EventType[] {
    return Object.keys(this.options.handlers) as EventType[];
  }

  /** Connects, subscribes and starts consuming; resolves once the group has been joined. */
  async start(): Promise<void> {
    await this.producer.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.topics, fromBeginning: true });
    const joined = new Promise<void>((resolve) => {
      const off = this.consumer.on(this.consumer.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      this.crashed = String(payload.error);
      this.logger.error(
        { consumer: this.options.name, err: this.crashed, restart: payload.restart },
        'consumer crashed',
      );
      if (payload.restart) this.crashed = null;
      else if (this.running) this.options.onFatal?.(this.crashed);
    });
    this.running = true;
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 3,
      eachMessage: async ({ topic, partition, message, heartbeat }) => {
        await this.process(topic, partition, message, heartbeat);
      },
    });
    await joined;
  }

  /** Why the consumer stopped for good (kafkajs does not restart on a non-retriable crash), or null. */
  get crashReason(): string | null {
    return this.crashed;
  }

  /** Stops fetching, lets the in-flight message finish, commits offsets and disconnects. */
  async stop(): Promise<void> {
    this.running = false;
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }

  /** Handles one Kafka message end to end; exported behaviour is its outcome. */
  async process(
    topic: string,
    partition: number,
    message: KafkaMessage,
    heartbeat?: Heartbeat,
  ): Promise<Outcome> {
    const text = message.value?.toString('utf8') ?? '';
    let event: SagaEvent;
    try {
      event = parseEvent(text);
      if (event.type !== topic)
        throw new ContractViolation(
          'CONTRACT.INVALID_ENVELOPE',
          `event of type ${event.type} on topic ${topic}`,
        );
    } catch (error) {
      if (!(error instanceof ContractViolation)) throw error;
      await this.park(topic, partition, message, { code: error.code, reason: error.message, attempts: 0 });
      return this.count(topic, 'dlq', null, message);
    }
    const handler = this.options.handlers[event.type] as EventHandler | undefined;
    if (!handler) return this.count(event.type, 'ignored', event, message);
    const end = this.duration?.startTimer({ consumer: this.options.name, type: event.type });
    try {
      const applied = await this.retry.execute(() => this.applyOnce(event, handler), heartbeat);
      return this.count(event.type, applied ? 'applied' : 'duplicate', event, message);
    } catch (error) {
      if (!(error instanceof HandlerGaveUp)) throw error; // shutting down or rebalanced: leave it uncommitted
      const cause = error.error;
      const code = cause instanceof NonRetryableError ? cause.code : 'HANDLER_FAILED';
      this.logger.error(
        {
          consumer: this.options.name,
          eventId: event.eventId,
          type: event.type,
          sagaId: event.sagaId,
          attempts: error.attempts,
          err: String(cause),
        },
        'event parked on the DLQ',
      );
      await this.park(topic, partition, message, { code, reason: error.message, attempts: error.attempts });
      return this.count(event.type, 'dlq', event, message);
    } finally {
      end?.();
    }
  }

  private async applyOnce(event: SagaEvent, handler: EventHandler): Promise<boolean> {
    const run = () =>
      this.options.dataSource.transaction(async (tx) => {
        const inserted: unknown[] = await tx.query(
          `INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT DO NOTHING RETURNING 1`,
          [this.options.name, event.eventId, event.type, event.tenantId, event.sagaId],
        );
        if (inserted.length === 0) return false;
        await handler(event, tx);
        return true;
      });
    return this.options.around ? this.options.around(event, run) : run();
  }

  private park(topic: string, partition: number, message: KafkaMessage, why: DlqReason): Promise<void> {
    return this.deadLetters.park(topic, partition, message, why);
  }

  private count(type: string, outcome: Outcome, event: SagaEvent | null, message: KafkaMessage): Outcome {
    this.counter?.inc({ consumer: this.options.name, type, outcome });
    this.options.onProcessed?.(outcome, event, message);
    return outcome;
  }
}
