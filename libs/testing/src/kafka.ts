import { randomUUID } from 'node:crypto';
import { Consumer, IHeaders, KafkaMessage } from 'kafkajs';
import { loadStackConfig, stackKafka, waitFor } from '@checkout/local-stack';

/** A message seen on a topic, with its headers as strings. */
export interface SeenMessage {
  topic: string;
  partition: number;
  offset: string;
  /** Broker timestamp, ms since epoch. */
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  json<T = Record<string, unknown>>(): T;
}

const asText = (headers: IHeaders | undefined): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers ?? {}).map(([k, v]) => [k, (Array.isArray(v) ? v[0] : v)?.toString() ?? '']),
  );

const seen = (topic: string, partition: number, m: KafkaMessage): SeenMessage => ({
  topic,
  partition,
  offset: m.offset,
  timestamp: Number(m.timestamp),
  key: m.key?.toString() ?? null,
  value: m.value?.toString() ?? null,
  headers: asText(m.headers),
  json() {
    return JSON.parse(this.value ?? 'null');
  },
});

/** Reads topics from the beginning with a throwaway group, collecting every message for assertions. */
export class TopicReader {
  readonly messages: SeenMessage[] = [];
  private consumer?: Consumer;

  constructor(private readonly topics: string[]) {}

  async start(): Promise<this> {
    this.consumer = stackKafka(loadStackConfig(), 'topic-reader').consumer({
      groupId: `reader-${randomUUID()}`,
      maxWaitTimeInMs: 100,
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.topics, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ topic, partition, message }) =>
        void this.messages.push(seen(topic, partition, message)),
    });
    return this;
  }

  /** Waits until the predicate matches `count` messages; returns them. */
  async waitFor(
    predicate: (m: SeenMessage) => boolean,
    { count = 1, timeoutMs = 30_000 } = {},
  ): Promise<SeenMessage[]> {
    return waitFor(
      `${count} matching message(s) on ${this.topics.join(', ')}`,
      async () => {
        const matching = this.messages.filter(predicate);
        return matching.length >= count ? matching : undefined;
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  matching(predicate: (m: SeenMessage) => boolean): SeenMessage[] {
    return this.messages.filter(predicate);
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}
