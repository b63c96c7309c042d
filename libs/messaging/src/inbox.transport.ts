import { BaseRpcContext, CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { PATTERN_EXTRAS_METADATA, PATTERN_METADATA } from '@nestjs/microservices/constants';
import { Batch, Consumer, KafkaMessage, OffsetsByTopicPartition, Producer } from 'kafkajs';
import { Counter, Histogram, Registry } from 'prom-client';
import { isObservable, lastValueFrom } from 'rxjs';
import { DataSource, EntityManager } from 'typeorm';
import { ContractViolation, DomainError, SagaEvent, ServiceCode, parseEvent } from '@checkout/contracts';
import { BackgroundStart } from './consumer-start';
import { ConsumerLagMonitor } from './consumer-lag';
import { KafkaOffsetReader } from './kafka-offsets';
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
import { FETCH_MAX_WAIT_MS } from './kafkajs-idle-fix';
import { Logger, consoleLogger } from './logger';
import { KAFKA_LAG_PROBES, consumedCounter, handlerDuration } from './metrics';
import { noteSagaLocks, sagaLockNames, sagaLocksQuery } from './saga-lock';
import { ScrapeProbe, addScrapeProbe } from './scrape-probe';

/** The transport id of the inbox transport (`@EventPattern(type, INBOX_TRANSPORT, extras)` to be explicit). */
export const INBOX_TRANSPORT = Symbol('checkout-inbox-kafka');

/**
 * What a consumer method says about its topic, as the extras of its `@EventPattern`:
 * `@EventPattern('order.created', { batch: true, group: 'reservations' })`.
 */
export interface InboxPatternExtras {
  /**
   * Group commit: the method receives `SagaEvent[]` (up to the transport's `batchSize`, one partition's events in
   * offset order) and applies them in ONE transaction with their inbox rows. A chunk that fails for its own reason
   * is applied again event by event (one bad event never holds back or parks the others).
   */
  batch?: boolean;
  /**
   * Consume this topic in a consumer group of its own, `<service>-<group>` (a hot topic's partitions get their own
   * workers). On its first start (no committed offsets) the group continues from the service group's offsets.
   */
  group?: string;
}

/** Work a handler queues for after its transaction has committed (a cache or a gate outside the database). */
type AfterCommit = () => Promise<unknown>;

/**
 * The context of one delivery, the second argument of every consumer method: the transaction in which the
 * events' inbox rows were recorded (write the effects with it; they commit together, and the offsets are resolved
 * only after that commit) and what may only happen after the commit.
 */
export class InboxContext extends BaseRpcContext<[topic: string, partition: number]> {
  constructor(
    /** The transaction of the inbox rows: every effect of the event is written with it. */
    readonly tx: EntityManager,
    topic: string,
    partition: number,
    private readonly after: AfterCommit[],
    /** Each event's scope (its consumer span); none when the whole transaction runs in its lone event's. */
    private readonly scope: (<R>(event: SagaEvent, fn: () => Promise<R>) => Promise<R>) | undefined,
  ) {
    super([topic, partition]);
  }

  get topic(): string {
    return this.args[0];
  }

  get partition(): number {
    return this.args[1];
  }

  /**
   * Runs fn once the transaction has committed, never if it rolls back (a retry queues it again). A failure is
   * logged, not retried: the event is applied and its offset moves on.
   */
  afterCommit(fn: AfterCommit): void {
    this.after.push(fn);
  }

  /**
   * Runs one event's part of a batch inside that event's context (its consumer span continues its trace). A
   * chunk of one event is in that context already: a second span would read as the event handled twice.
   */
  eventScope<R>(event: SagaEvent, fn: () => Promise<R>): Promise<R> {
    return this.scope ? this.scope(event, fn) : fn();
  }
}

/** What happened to one message. */
export type Outcome = 'applied' | 'duplicate' | 'dlq' | 'ignored';

/** Settings of the inbox transport of one service. */
export interface InboxTransportOptions {
  /** The service: names its consumer group(s) and its inbox rows. */
  name: string;
  brokers: string[];
  /** TLS and SASL of a secured cluster (from the service config). */
  security?: KafkaSecurity;
  dataSource: DataSource;
  logger?: Logger;
  registry?: Registry;
  /**
   * The tenant and saga check every event passes before its handler: the tenant is one this deployment serves,
   * the saga id is the payload's orderId and a payload's tenantId is the envelope's. A failed check parks the
   * event with `<codePrefix>.UNKNOWN_TENANT`, `.SAGA_MISMATCH` or `.TENANT_MISMATCH`. Omitted: no check.
   */
  admission?: { tenants: { get(id: string): unknown }; codePrefix: ServiceCode };
  /**
   * Every event's saga lock (lockSagas: tenant and order) is taken by the statement that records its inbox row,
   * one round trip fewer per event for a service whose handlers all take it; their own lockSaga calls then skip
   * it (the transaction holds it already).
   */
  sagaLocks?: boolean;
  /** Events per transaction at most, for `batch: true` handlers (default 100). */
  batchSize?: number;
  /**
   * Events per transaction at most for the other handlers (default 20): the events of one partition that came
   * in one fetch are applied in one transaction, the method called once per event in offset order, with one
   * inbox statement and one commit for all (group commit: a consumer that falls behind catches up at a fraction
   * of the cost per event). A chunk that fails is applied again event by event, so one bad event never holds
   * back or parks the others. 1: a transaction per event.
   */
  groupCommitSize?: number;
  /**
   * Attempts of a handler failing for another reason than the infrastructure before the message is parked on
   * the DLQ (default 5); infrastructure errors are retried without limit (HandlerRetry).
   */
  maxAttempts?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Runs one event's handling inside a context (e.g. continues the event's trace). */
  around?: <R>(event: SagaEvent, fn: () => Promise<R>) => Promise<R>;
  /**
   * Opens the contexts of the events a batch handler applies in one transaction (e.g. a consumer span per event,
   * each in its own trace): `within` runs an event's part in its context (InboxContext.eventScope), `end` closes
   * them once the handler is done (as failed when it threw).
   */
  aroundChunk?: (events: SagaEvent[]) => {
    within<R>(event: SagaEvent, fn: () => Promise<R>): Promise<R>;
    end(error?: unknown): void;
  };
  partitionsConsumedConcurrently?: number;
  /**
   * How the broker answers this transport's fetches (kafkajs' `minBytes` and `maxWaitTimeInMs`). Default: at the
   * first message (minBytes 1), or after FETCH_MAX_WAIT_MS with none. A consumer off the saga's path can ask for
   * batches instead: with a large `minBytes` the broker holds each fetch for `maxWaitTimeInMs` unless that much
   * has arrived, so one transaction applies what came in that time. Such a consumer gathers only while messages
   * come: after a fetch that brought none, the next waits for the first message as the default does
   * (kafkajs-idle-fix.ts).
   */
  fetch?: { minBytes: number; maxWaitTimeInMs: number };
  /**
   * Offsets are committed at most once per this many ms per group (default COMMIT_INTERVAL_MS; 0: after every
   * chunk), and whatever is left is committed within it when the partition goes quiet and on close.
   */
  commitIntervalMs?: number;
  /**
   * Each group's lag and DLQ depth are read from Kafka when the registry is scraped, at most once per this many
   * ms (nothing is read while nobody scrapes); omitted: never.
   */
  lagProbeIntervalMs?: number;
  /** Backoff of a group join that failed (Kafka away at boot), retried in the background. */
  startBackoff?: { initialMs: number; maxMs: number };
  /** Called when a group's consumer stopped for good (a crash kafkajs will not restart from). */
  onFatal?: (reason: string) => void;
  /** Called after each message with what happened to it (for trackers and tests). */
  onProcessed?: (outcome: Outcome, event: SagaEvent | null, message: KafkaMessage) => void;
}

/** How long the broker holds a fetch that finds no message (kafkajs-idle-fix.ts). */
export { FETCH_MAX_WAIT_MS };

/** Events per transaction at most for a handler without `batch: true` (InboxTransportOptions.groupCommitSize). */
export const GROUP_COMMIT_SIZE = 20;

/**
 * How often a group commits its consumed offsets. Every commit is a request the broker appends to
 * __consumer_offsets; committing after every batch of one or two messages cost the broker about a third of its
 * CPU per saga. A crash or rebalance redelivers at most this much work, which the inbox absorbs (each event is
 * applied once per consumer whatever Kafka redelivers).
 */
export const COMMIT_INTERVAL_MS = 1_000;

/** One consumer group of the transport and its topics. */
interface Group {
  groupId: string;
  topics: string[];
  /** The group whose offsets a fresh group continues from. */
  takeOverFrom?: string;
  consumer?: Consumer;
  starter?: BackgroundStart;
  lag?: { monitor: ConsumerLagMonitor; remove: () => void };
  /** Commits the offsets resolved and not committed yet (set by the first batch; a no-op when none are). */
  commitPending?: () => Promise<void>;
  /** Commits, one interval after a batch, what a partition that went quiet left uncommitted. */
  flushTimer?: NodeJS.Timeout;
}

/**
 * The service's Kafka consumer runtime as a Nest transport (a hybrid app's `connectMicroservice({ strategy })`):
 * every `@EventPattern(type)` method of the service's consumer classes handles the topic of that event type.
 * Per message: validate against libs/contracts (an invalid one is parked with its CONTRACT.* code), the tenant and
 * saga check (`admission`), then in ONE DB transaction record the event id in the inbox (a redelivered event is a
 * duplicate, skipped) and run the method with the transaction in its context; the offset is resolved only after
 * the commit. A partition's events come in chunks of one transaction each (group commit): `batch: true` methods
 * get the chunk as an array, the others are called once per event of it. Failures are retried with backoff
 * (HandlerRetry: infrastructure errors without limit, heartbeating); a DomainError (libs/contracts) parks the
 * message on `<topic>.dlq` with its code at once, any other error after `maxAttempts`. `listen()` returns at
 * once: the groups join in the background (readiness does not wait for Kafka); `close()` stops fetching, lets the
 * work in flight finish, commits and disconnects.
 */
export class InboxTransport extends Server implements CustomTransportStrategy {
  override transportId = INBOX_TRANSPORT;
  private readonly kafka: ReturnType<typeof createKafka>;
  private readonly producer: Producer;
  private readonly log: Logger;
  private readonly deadLetters: DeadLetters;
  private readonly counter?: Counter<'consumer' | 'type' | 'outcome'>;
  private readonly duration?: Histogram<'consumer' | 'type'>;
  /** A chunk: a few attempts as a whole, then its events one by one. */
  private readonly chunkRetry: HandlerRetry;
  /** One event: the full policy. */
  private readonly eventRetry: HandlerRetry;
  private groups: Group[] = [];
  /** Reads the offsets behind every group's lag gauges (one connection for the service). */
  private offsets?: KafkaOffsetReader;
  private running = false;
  private producerConnected?: Promise<void>;

  constructor(private readonly options: InboxTransportOptions) {
    super();
    this.kafka = createKafka(options.brokers, `${options.name}-consumer`, options.security);
    this.producer = this.kafka.producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    this.log = options.logger ?? consoleLogger;
    this.deadLetters = new DeadLetters(this.producer, options.name, this.log);
    const retry = (maxAttempts: number) =>
      new HandlerRetry({
        maxAttempts,
        backoff: options.backoff ?? { initialMs: 200, maxMs: 5_000 },
        running: () => this.running,
        databaseHealthy: () => databaseAnswers((q) => options.dataSource.query(q)),
        logger: this.log,
        consumer: options.name,
      });
    this.chunkRetry = retry(3);
    this.eventRetry = retry(options.maxAttempts ?? 5);
    if (options.registry) {
      this.counter = consumedCounter(options.registry);
      this.duration = handlerDuration(options.registry);
    }
  }

  /**
   * Registers every `@EventPattern` method of a consumer instance, as Nest does for a controller: for code that
   * runs the transport without a Nest application (specs, benches).
   */
  addConsumer(instance: object): this {
    const proto = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const key of Object.getOwnPropertyNames(proto)) {
      const method = proto[key];
      if (key === 'constructor' || typeof method !== 'function') continue;
      const patterns = Reflect.getMetadata(PATTERN_METADATA, method) as string[] | undefined;
      if (!patterns) continue;
      const extras = (Reflect.getMetadata(PATTERN_EXTRAS_METADATA, method) ?? {}) as Record<string, unknown>;
      for (const pattern of patterns)
        this.addHandler(
          pattern,
          (data: unknown, ctx: unknown) => (method as MessageHandler).call(instance, data, ctx),
          true,
          extras,
        );
    }
    return this;
  }

  /** The topics handled: one per registered event type. */
  get topics(): string[] {
    return [...this.messageHandlers.keys()];
  }

  /** The consumer groups and their topics (the service's group, plus one per `group` extra). */
  groupsOf(): { groupId: string; topics: string[] }[] {
    const byGroup = new Map<string, string[]>();
    for (const [topic, handler] of this.messageHandlers) {
      const group = (handler.extras as InboxPatternExtras | undefined)?.group;
      const groupId = group ? `${this.options.name}-${group}` : this.options.name;
      byGroup.set(groupId, [...(byGroup.get(groupId) ?? []), topic]);
    }
    return [...byGroup].map(([groupId, topics]) => ({ groupId, topics }));
  }

  /** Starts every group's join in the background and calls back at once (the HTTP port never waits for Kafka). */
  listen(callback: (error?: unknown) => void): void {
    for (const [topic, handler] of this.messageHandlers) {
      if (handler.next) {
        callback(new Error(`more than one @EventPattern('${topic}') method: a topic has one handler`));
        return;
      }
    }
    this.running = true;
    this.groups = this.groupsOf().map((g) => ({
      ...g,
      takeOverFrom: g.groupId === this.options.name ? undefined : this.options.name,
    }));
    for (const group of this.groups) {
      group.starter = new BackgroundStart(
        group.groupId,
        this.log,
        () => this.startGroup(group),
        async () => {
          await group.consumer?.disconnect();
          group.consumer = undefined;
        },
        this.options.startBackoff,
      );
    }
    callback();
  }

  /** Stops fetching, lets the work in flight finish, commits offsets and disconnects. */
  async close(): Promise<void> {
    this.running = false;
    for (const group of this.groups) group.starter?.stop();
    await Promise.all(
      this.groups.map(async (group) => {
        if (group.lag) {
          group.lag.remove();
          await group.lag.monitor.close();
        }
        clearTimeout(group.flushTimer);
        group.flushTimer = undefined;
        await this.commitPending(group);
        await group.consumer?.disconnect();
        group.consumer = undefined;
      }),
    );
    await this.offsets?.close();
    this.offsets = undefined;
    if (this.producerConnected) await this.producer.disconnect();
    this.producerConnected = undefined;
    this.groups = [];
  }

  on(): never {
    throw new Error('InboxTransport has no events to listen to');
  }

  unwrap<T>(): T {
    return this.groups.map((g) => g.consumer) as T;
  }

  private async startGroup(group: Group): Promise<void> {
    this.producerConnected ??= this.producer.connect();
    await this.producerConnected;
    await this.takeOverOffsets(group);
    const consumer = this.kafka.consumer({
      groupId: group.groupId,
      allowAutoTopicCreation: false,
      minBytes: this.options.fetch?.minBytes ?? 1,
      maxWaitTimeInMs: this.options.fetch?.maxWaitTimeInMs ?? FETCH_MAX_WAIT_MS,
      retry: { retries: 10 },
    });
    group.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: group.topics, fromBeginning: true });
    const joined = new Promise<void>((resolve) => {
      const off = consumer.on(consumer.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      const reason = String(payload.error);
      this.log.error({ consumer: group.groupId, err: reason, restart: payload.restart }, 'consumer crashed');
      if (!payload.restart && this.running) this.options.onFatal?.(reason);
    });
    const interval = this.commitInterval();
    await consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 3,
      eachBatchAutoResolve: false,
      // kafkajs' autoCommit commits after every batch; off, consumeBatch commits once the interval has passed
      // (commitOffsetsIfNecessary) and the flush timer commits what a quiet partition left.
      autoCommit: interval === 0,
      autoCommitInterval: interval === 0 ? null : interval,
      eachBatch: (payload) => this.consumeBatch(group, payload),
    });

    await joined;
    if (group.starter?.isStopped) return;
    this.log.info({ groupId: group.groupId, topics: group.topics }, 'consumer started');
    if (this.options.lagProbeIntervalMs !== undefined) {
      const monitor = new ConsumerLagMonitor({
        groupId: group.groupId,
        topics: group.topics,
        brokers: this.options.brokers,
        security: this.options.security,
        registry: this.options.registry,
        offsets: (this.offsets ??= new KafkaOffsetReader(
          this.options.brokers,
          `${this.options.name}-lag-monitor`,
          this.options.security,
        )),
      });
      const probe = new ScrapeProbe(
        `${group.groupId}-lag`,
        () => monitor.probe(),
        this.options.lagProbeIntervalMs,
        this.log,
      );
      const remove = this.options.registry
        ? addScrapeProbe(this.options.registry, KAFKA_LAG_PROBES, probe)
        : () => undefined;
      group.lag = { monitor, remove };
    }
  }

  /** A batch of one partition, in chunks of one transaction each (batchSize or groupCommitSize events). */
  private async consumeBatch(
    group: Group,
    {
      batch,
      resolveOffset,
      heartbeat,
      commitOffsetsIfNecessary,
      uncommittedOffsets,
      isRunning,
      isStale,
    }: {
      batch: Batch;
      resolveOffset: (offset: string) => void;
      heartbeat: Heartbeat;
      commitOffsetsIfNecessary: (offsets?: OffsetsByTopicPartition) => Promise<void>;
      uncommittedOffsets: () => OffsetsByTopicPartition;
      isRunning: () => boolean;
      isStale: () => boolean;
    },
  ): Promise<void> {
    group.commitPending = () => commitOffsetsIfNecessary(uncommittedOffsets());
    const handler = this.messageHandlers.get(batch.topic);
    const size = (handler?.extras as InboxPatternExtras | undefined)?.batch
      ? (this.options.batchSize ?? 100)
      : (this.options.groupCommitSize ?? GROUP_COMMIT_SIZE);
    for (let i = 0; i < batch.messages.length; i += size) {
      if (!isRunning() || isStale()) return;
      const chunk = batch.messages.slice(i, i + size);
      await this.deliver(batch.topic, batch.partition, chunk, heartbeat);
      resolveOffset(chunk[chunk.length - 1].offset);
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
    // Closing: what this batch did is committed now, not left to the next owner to redo.
    if (!this.running) await this.commitPending(group);
    // A partition that goes quiet gets its last offsets committed one interval later (no timer at rest).
    else if (!group.flushTimer && this.commitInterval() > 0) {
      group.flushTimer = setTimeout(() => {
        group.flushTimer = undefined;
        void this.commitPending(group);
      }, this.commitInterval());
      group.flushTimer.unref();
    }
  }

  private commitInterval(): number {
    return this.options.commitIntervalMs ?? COMMIT_INTERVAL_MS;
  }

  /** Commits the group's resolved offsets now; a failure (a rebalance, the broker away) leaves them to redelivery. */
  private async commitPending(group: Group): Promise<void> {
    try {
      await group.commitPending?.();
    } catch (error) {
      this.log.warn(
        { consumer: group.groupId, err: String(error) },
        'offset commit failed; the inbox absorbs the redelivery',
      );
    }
  }

  /**
   * Handles messages of one partition end to end (validation, admission, inbox + handler, retries, DLQ). Throws only
   * when the work must stay uncommitted (shutting down, rebalanced).
   */
  async deliver(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
    heartbeat?: Heartbeat,
  ): Promise<void> {
    const parsed: { event: SagaEvent; message: KafkaMessage }[] = [];
    for (const message of messages) {
      try {
        const event = parseEvent(message.value?.toString('utf8') ?? '');
        if (event.type !== topic)
          throw new ContractViolation(
            'CONTRACT.INVALID_ENVELOPE',
            `event of type ${event.type} on topic ${topic}`,
          );
        parsed.push({ event, message });
      } catch (error) {
        if (!(error instanceof ContractViolation)) throw error;
        await this.park(topic, partition, message, { code: error.code, reason: error.message, attempts: 0 });
        this.count(topic, 'dlq', null, message);
      }
    }
    if (parsed.length === 0) return;
    if (!this.messageHandlers.has(topic)) {
      for (const p of parsed) this.count(topic, 'ignored', p.event, p.message);
      return;
    }
    if (parsed.length > 1) {
      const started = performance.now();
      try {
        const fresh = await this.chunkRetry.execute(
          () =>
            this.applyOnce(
              topic,
              partition,
              parsed.map((p) => p.event),
            ),
          heartbeat,
        );
        // Each event of the chunk counts its share of the chunk's time (one transaction for all of them).
        const share = (performance.now() - started) / 1000 / parsed.length;
        for (const p of parsed) {
          this.duration?.observe({ consumer: this.options.name, type: topic }, share);
          this.count(topic, fresh.has(p.event.eventId) ? 'applied' : 'duplicate', p.event, p.message);
        }
        return;
      } catch (error) {
        if (!(error instanceof HandlerGaveUp)) throw error; // shutting down or rebalanced: leave it uncommitted
      }
    }
    for (const p of parsed) await this.deliverAlone(topic, partition, p.event, p.message, heartbeat);
  }

  private async deliverAlone(
    topic: string,
    partition: number,
    event: SagaEvent,
    message: KafkaMessage,
    heartbeat?: Heartbeat,
  ): Promise<void> {
    const end = this.duration?.startTimer({ consumer: this.options.name, type: topic });
    try {
      const fresh = await this.eventRetry.execute(() => this.applyOnce(topic, partition, [event]), heartbeat);
      this.count(topic, fresh.size === 1 ? 'applied' : 'duplicate', event, message);
    } catch (error) {
      if (!(error instanceof HandlerGaveUp)) throw error; // shutting down or rebalanced: leave it uncommitted
      const cause = error.error;
      const code = cause instanceof NonRetryableError ? cause.code : 'HANDLER_FAILED';
      this.log.error(
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
      this.count(topic, 'dlq', event, message);
    } finally {
      end?.();
    }
  }

  /**
   * One attempt at events of one topic as a delivery makes it (no retry, no DLQ: an error is thrown): the
   * database path of the runtime, for specs and benches.
   */
  async apply(
    topic: string,
    events: SagaEvent[],
    partition = 0,
  ): Promise<{ applied: number; duplicates: number }> {
    const fresh = await this.applyOnce(topic, partition, events);
    return { applied: fresh.size, duplicates: events.length - fresh.size };
  }

  /**
   * One attempt: admission, then the inbox rows and the handler in one transaction (events already in the inbox,
   * or twice in the chunk, are skipped), then the handler's after-commit work. Resolves to the ids applied.
   */
  private async applyOnce(topic: string, partition: number, events: SagaEvent[]): Promise<Set<string>> {
    const handler = this.messageHandlers.get(topic);
    if (!handler) throw new Error(`no @EventPattern('${topic}') method`);
    for (const event of events) this.admit(event);
    const batch = (handler.extras as InboxPatternExtras | undefined)?.batch === true;
    const after: AfterCommit[] = [];
    const scope = <R>(event: SagaEvent, fn: () => Promise<R>) =>
      this.options.around ? this.options.around(event, fn) : fn();
    const run = () =>
      this.options.dataSource.transaction(async (tx) => {
        after.length = 0;
        const locks = this.options.sagaLocks
          ? sagaLockNames(events.map((e) => ({ tenantId: e.tenantId, orderId: e.sagaId })))
          : undefined;
        const inserted: { event_id: string }[] = await tx.query(
          `${locks ? `WITH s AS MATERIALIZED (${sagaLocksQuery(6)})` : ''}
           INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id)
           SELECT $1, e.id, e.type, e.tenant_id, e.saga_id
             FROM ${locks ? 's, ' : ''}unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[]) AS e(id, type, tenant_id, saga_id)
           ON CONFLICT DO NOTHING RETURNING event_id`,
          [
            this.options.name,
            events.map((e) => e.eventId),
            events.map((e) => e.type),
            events.map((e) => e.tenantId),
            events.map((e) => e.sagaId),
            ...(locks ? [locks] : []),
          ],
        );
        if (locks) noteSagaLocks(tx, locks);
        const isNew = new Set(inserted.map((r) => r.event_id));
        const fresh = events.filter((e) => isNew.delete(e.eventId.toLowerCase()));
        if (fresh.length === 0) return fresh;
        if (batch && events.length > 1 && this.options.aroundChunk) {
          // Every event of the chunk gets its context, though the handler may work on them all at once.
          const chunk = this.options.aroundChunk(fresh);
          try {
            await this.invoke(handler, fresh, new InboxContext(tx, topic, partition, after, chunk.within));
            chunk.end();
          } catch (error) {
            chunk.end(error);
            throw error;
          }
          return fresh;
        }
        // A lone event's whole transaction already runs in its scope: eventScope must not open a second one.
        const ctx = new InboxContext(tx, topic, partition, after, events.length === 1 ? undefined : scope);
        if (batch) await this.invoke(handler, fresh, ctx);
        else if (events.length === 1) await this.invoke(handler, fresh[0], ctx);
        // Group commit: each event's call in its own context (its consumer span continues its trace).
        else for (const event of fresh) await scope(event, () => this.invoke(handler, event, ctx));
        return fresh;
      });
    const fresh = await (events.length === 1 ? scope(events[0], run) : run());
    for (const fn of after) {
      try {
        await fn();
      } catch (error) {
        this.log.error(
          { consumer: this.options.name, topic, err: String(error) },
          'after-commit work of an applied event failed',
        );
      }
    }
    return new Set(fresh.map((e) => e.eventId));
  }

  /** Calls a Nest event handler and waits for it; a DomainError becomes a NonRetryableError (park it with its code). */
  private async invoke(handler: MessageHandler, data: unknown, ctx: InboxContext): Promise<void> {
    try {
      const result: unknown = await handler(data, ctx);
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
    } catch (error) {
      if (error instanceof DomainError && !(error instanceof NonRetryableError))
        throw new NonRetryableError(error.code, error.message, error.details);
      throw error;
    }
  }

  /** The tenant and saga check of `admission`. */
  private admit(event: SagaEvent): void {
    const admission = this.options.admission;
    if (!admission) return;
    const prefix = admission.codePrefix;
    if (!admission.tenants.get(event.tenantId))
      throw new NonRetryableError(`${prefix}.UNKNOWN_TENANT`, `unknown tenant ${event.tenantId}`);
    const payload = event.payload as { orderId?: unknown; tenantId?: unknown };
    if (payload.orderId !== event.sagaId)
      throw new NonRetryableError(
        `${prefix}.SAGA_MISMATCH`,
        `sagaId ${event.sagaId} is not orderId ${String(payload.orderId)}`,
      );
    if (payload.tenantId !== undefined && payload.tenantId !== event.tenantId)
      throw new NonRetryableError(
        `${prefix}.TENANT_MISMATCH`,
        `payload tenant ${String(payload.tenantId)} is not ${event.tenantId}`,
      );
  }

  private async takeOverOffsets(group: Group): Promise<void> {
    const { takeOverFrom, groupId, topics } = group;
    if (!takeOverFrom) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      for (const topic of topics) {
        const [mine] = await admin.fetchOffsets({ groupId, topics: [topic] });
        if (mine.partitions.some((p) => p.offset !== '-1')) continue;
        const [previous] = await admin.fetchOffsets({ groupId: takeOverFrom, topics: [topic] });
        const partitions = previous.partitions.filter((p) => p.offset !== '-1');
        if (partitions.length === 0) continue;
        await admin.setOffsets({ groupId, topic, partitions });
        this.log.info(
          { groupId, takeOverFrom, topic, partitions },
          'group continues from the previous group',
        );
      }
    } finally {
      await admin.disconnect();
    }
  }

  private async park(topic: string, partition: number, message: KafkaMessage, why: DlqReason): Promise<void> {
    this.producerConnected ??= this.producer.connect();
    await this.producerConnected;
    await this.deadLetters.park(topic, partition, message, why);
  }

  private count(type: string, outcome: Outcome, event: SagaEvent | null, message: KafkaMessage): void {
    this.counter?.inc({ consumer: this.options.name, type, outcome });
    this.options.onProcessed?.(outcome, event, message);
  }
}
