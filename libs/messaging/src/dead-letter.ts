import { IHeaders, KafkaMessage, Producer } from 'kafkajs';
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { ErrorCode, dlqTopic } from '@checkout/contracts';
import { NonRetryableError, isInfrastructureError } from './errors';
import { Logger } from './logger';

/** Why a message was parked, as recorded in its DLQ headers. */
export interface DlqReason {
  code: ErrorCode;
  reason: string;
  attempts: number;
}

/** A header's text, whichever way kafkajs delivered it. */
export const headerText = (headers: IHeaders | undefined, name: string): string | undefined => {
  const v = headers?.[name];
  if (v === undefined || v === null) return undefined;
  return Array.isArray(v) ? v[0]?.toString() : v.toString();
};

/** Kafka headers with null values (e.g. a null causationId) cannot be produced again. */
export function withoutNulls(headers: IHeaders | undefined): IHeaders {
  return Object.fromEntries(
    Object.entries(headers ?? {}).filter(([, v]) => v !== null && v !== undefined),
  ) as IHeaders;
}

/** Keeps the consumer's group membership alive while a handler is retried (kafkajs `heartbeat()`). */
export type Heartbeat = () => Promise<void>;

/** How a failing handler is retried. */
export interface HandlerRetryOptions {
  /** Attempts of a handler failing for another reason than the infrastructure before it is given up. */
  maxAttempts: number;
  backoff: { initialMs: number; maxMs: number };
  /** False once the consumer stops: a shutdown leaves the message uncommitted instead of parking it. */
  running: () => boolean;
  /** Whether the database answers; an error that persists while it does not is not the event's fault. */
  databaseHealthy: () => Promise<boolean>;
  logger: Logger;
  consumer: string;
}

/** A handler given up: the last error and how many times the handler ran. */
export class HandlerGaveUp extends Error {
  constructor(
    readonly error: unknown,
    readonly attempts: number,
  ) {
    super(error instanceof Error ? error.message : String(error));
    this.name = 'HandlerGaveUp';
  }
}

/** The group rebalanced (or the consumer lost its session) while a handler was being retried. */
class Interrupted extends Error {
  constructor(readonly error: unknown) {
    super(String(error));
  }
}

/**
 * The retry policy of a handler (exponential backoff, capped, heartbeating before each attempt so the group does
 * not rebalance while the partition waits):
 * - a NonRetryableError is given up at once (the caller parks it);
 * - an infrastructure error (isInfrastructureError: a database restart, failover, pool exhaustion, deadlock)
 *   is retried without limit: the partition waits for the database instead of parking its events;
 * - any other error is retried maxAttempts times; if it persists, the database is probed: healthy, the event is
 *   given up (parked); not healthy, the failures were the outage's: wait for the database, then start over.
 * A heartbeat that fails (rebalance) rethrows its error: the message stays uncommitted for the next owner.
 */
export class HandlerRetry {
  constructor(private readonly options: HandlerRetryOptions) {}

  /** Runs fn until it succeeds; throws HandlerGaveUp (park it) or the error to leave the message uncommitted. */
  async execute<T>(fn: () => Promise<T>, heartbeat: Heartbeat = async () => {}): Promise<T> {
    let attempts = 0;
    const beat = async () => {
      try {
        await heartbeat();
      } catch (error) {
        throw new Interrupted(error);
      }
    };
    const forever = (handled: (e: unknown) => boolean) =>
      retry(
        handleWhen((e) => !(e instanceof Interrupted) && this.options.running() && handled(e)),
        {
          maxAttempts: Number.POSITIVE_INFINITY,
          backoff: new ExponentialBackoff({
            initialDelay: this.options.backoff.initialMs,
            maxDelay: this.options.backoff.maxMs,
          }),
        },
      );
    let round = 0;
    const handler = forever((e) => {
      if (e instanceof NonRetryableError) return false;
      if (isInfrastructureError(e)) return true;
      round += 1;
      return round < this.options.maxAttempts;
    });
    // Until the database answers again; then the handler gets a fresh round of attempts.
    const outage = forever(() => true);
    handler.onRetry(({ attempt, delay, ...r }) => {
      if (attempt % 10 === 0 && 'error' in r && isInfrastructureError(r.error))
        this.options.logger.warn(
          { consumer: this.options.consumer, attempt, delayMs: delay, err: String(r.error) },
          'handler waits for the infrastructure',
        );
    });
    try {
      for (;;) {
        try {
          return await handler.execute(async () => {
            await beat();
            attempts += 1;
            return fn();
          });
        } catch (error) {
          if (error instanceof Interrupted || error instanceof NonRetryableError || !this.options.running())
            throw error;
          const healthy = await this.options.databaseHealthy();
          if (healthy) throw new HandlerGaveUp(error, attempts);
          this.options.logger.warn(
            { consumer: this.options.consumer, attempts, err: String(error) },
            'handler failed while the database was unhealthy: waiting for it',
          );
          await outage.execute(async () => {
            await beat();
            if (!(await this.options.databaseHealthy())) throw new Error('database still unhealthy');
          });
          round = 0;
        }
      }
    } catch (error) {
      if (error instanceof Interrupted) throw error.error;
      if (error instanceof NonRetryableError) throw new HandlerGaveUp(error, attempts);
      throw error;
    }
  }
}

/** Whether the database answers a trivial query. */
export async function databaseAnswers(query: (sql: string) => Promise<unknown>): Promise<boolean> {
  try {
    await query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** Parks poison messages on `<topic>.dlq` with the original message and the reason in headers. */
export class DeadLetters {
  constructor(
    private readonly producer: Producer,
    private readonly consumerName: string,
    private readonly logger: Logger,
  ) {}

  async park(topic: string, partition: number, message: KafkaMessage, why: DlqReason): Promise<void> {
    await this.producer.send({
      topic: dlqTopic(topic),
      messages: [
        {
          key: message.key,
          value: message.value,
          headers: {
            ...withoutNulls(message.headers),
            'dlq-code': why.code,
            'dlq-reason': why.reason.slice(0, 2000),
            'dlq-attempts': String(why.attempts),
            'dlq-consumer': this.consumerName,
            'dlq-original-topic': topic,
            'dlq-original-partition': String(partition),
            'dlq-original-offset': message.offset,
            'dlq-event-id': headerText(message.headers, 'eventId') ?? '',
          },
        },
      ],
    });
    this.logger.warn(
      { consumer: this.consumerName, topic, partition, offset: message.offset, ...why },
      'message parked on dead-letter topic',
    );
  }
}
