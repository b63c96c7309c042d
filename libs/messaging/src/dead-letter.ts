import { IHeaders, KafkaMessage, Producer } from 'kafkajs';
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { dlqTopic } from '@checkout/contracts';
import { NonRetryableError } from './errors';
import { Logger } from './logger';

/** Why a message was parked, as recorded in its DLQ headers. */
export interface DlqReason {
  code: string;
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

/**
 * The retry policy of a handler: exponential backoff, every error but a NonRetryableError, and only while
 * the consumer runs (a shutdown leaves the message uncommitted instead of parking it).
 */
export function handlerRetry(
  maxAttempts: number,
  backoff: { initialMs: number; maxMs: number },
  running: () => boolean,
) {
  return retry(
    handleWhen((e) => !(e instanceof NonRetryableError) && running()),
    {
      maxAttempts: maxAttempts - 1,
      backoff: new ExponentialBackoff({ initialDelay: backoff.initialMs, maxDelay: backoff.maxMs }),
    },
  );
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
