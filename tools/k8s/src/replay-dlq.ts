import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { IHeaders, KafkaMessage } from 'kafkajs';
import { KafkaSecurity, createKafka, kafkaSecurityFromEnv, parseBrokers } from '@checkout/messaging';

/**
 * DLQ replay (docs/runbook.md): reads a `<topic>.dlq` up to its current end, picks the parked messages that match
 * the filters and, with --apply, produces each one again to its `dlq-original-topic` with the same key, value and
 * envelope headers (dlq-* headers dropped, `dlq-replayed-from` added). Without --apply it only lists them.
 * Replaying is safe: every consumer dedupes by eventId in its inbox, so a message that was applied meanwhile is
 * a no-op, and the state machines ignore transitions that are no longer allowed.
 *
 *   node tools/k8s/dist/src/replay-dlq.js --dlq order.paid.dlq [--event-id ID] [--code CODE] [--consumer NAME]
 *        [--saga-id ID] [--apply] [--brokers host:port,...]
 */

export interface ParkedMessage {
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

export interface ReplayFilter {
  eventId?: string;
  code?: string;
  consumer?: string;
  sagaId?: string;
}

const asText = (headers: IHeaders | undefined): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers ?? {})
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => [k, (Array.isArray(v) ? v[0] : v)?.toString() ?? '']),
  );

/** Whether a parked message matches every given filter. */
export const matchesFilter = (m: ParkedMessage, f: ReplayFilter): boolean =>
  (!f.eventId || m.headers.eventId === f.eventId) &&
  (!f.code || m.headers['dlq-code'] === f.code) &&
  (!f.consumer || m.headers['dlq-consumer'] === f.consumer) &&
  (!f.sagaId || m.headers.sagaId === f.sagaId);

/** The message to produce again: original topic, key, value, envelope headers, and where it was parked. */
export function replayOf(dlq: string, m: ParkedMessage) {
  const topic = m.headers['dlq-original-topic'];
  if (!topic) throw new Error(`${dlq}/${m.partition}/${m.offset} has no dlq-original-topic header`);
  const headers = Object.fromEntries(Object.entries(m.headers).filter(([k]) => !k.startsWith('dlq-')));
  return {
    topic,
    message: {
      key: m.key,
      value: m.value,
      headers: { ...headers, 'dlq-replayed-from': `${dlq}/${m.partition}/${m.offset}` },
    },
  };
}

/** Reads a DLQ from its start to its end at the time of the call, with a throwaway consumer group. */
async function readDlq(
  brokers: string[],
  security: KafkaSecurity,
  dlq: string,
  timeoutMs = 60_000,
): Promise<ParkedMessage[]> {
  const kafka = createKafka(brokers, 'dlq-replay', security);
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `dlq-replay-${randomUUID()}`;
  try {
    const ends = new Map(
      (await admin.fetchTopicOffsets(dlq))
        .filter((p) => Number(p.high) > Number(p.low))
        .map((p) => [p.partition, Number(p.high) - 1]),
    );
    if (ends.size === 0) return [];
    const consumer = kafka.consumer({ groupId });
    await consumer.connect();
    const out: ParkedMessage[] = [];
    try {
      await consumer.subscribe({ topic: dlq, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`reading ${dlq} took over ${timeoutMs} ms`)),
          timeoutMs,
        );
        const done = new Set<number>();
        consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
              const end = ends.get(partition);
              if (end === undefined || done.has(partition) || Number(message.offset) > end) return;
              out.push({
                partition,
                offset: message.offset,
                key: message.key,
                value: message.value,
                headers: asText(message.headers),
              });
              if (Number(message.offset) >= end) done.add(partition);
              if (done.size === ends.size) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return out;
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dlq: { type: 'string' },
      'event-id': { type: 'string' },
      code: { type: 'string' },
      consumer: { type: 'string' },
      'saga-id': { type: 'string' },
      apply: { type: 'boolean', default: false },
      brokers: { type: 'string', default: process.env.KAFKA_BROKERS ?? 'localhost:59092' },
    },
  });
  if (!values.dlq?.endsWith('.dlq')) throw new Error('--dlq <topic>.dlq is required');
  const brokers = parseBrokers(values.brokers ?? '');
  // TLS and SASL from the same variables as the services (KAFKA_SASL_*, KAFKA_SSL*).
  const security = kafkaSecurityFromEnv();
  const filter: ReplayFilter = {
    eventId: values['event-id'],
    code: values.code,
    consumer: values.consumer,
    sagaId: values['saga-id'],
  };
  const parked = (await readDlq(brokers, security, values.dlq)).filter((m) => matchesFilter(m, filter));
  for (const m of parked)
    console.log(
      `${values.dlq}/${m.partition}/${m.offset} eventId=${m.headers.eventId} sagaId=${m.headers.sagaId} ` +
        `consumer=${m.headers['dlq-consumer']} code=${m.headers['dlq-code']} reason=${m.headers['dlq-reason']}`,
    );
  if (!values.apply) {
    console.log(`${parked.length} message(s) match; nothing produced (dry run: add --apply to replay)`);
    return;
  }
  const producer = createKafka(brokers, 'dlq-replay', security).producer({
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    for (const m of parked) {
      const { topic, message } = replayOf(values.dlq, m);
      await producer.send({ topic, messages: [message] });
    }
  } finally {
    await producer.disconnect();
  }
  console.log(`replayed ${parked.length} message(s) to their original topics`);
}

if (require.main === module)
  main().catch((error: unknown) => {
    console.error((error as Error).message);
    process.exit(1);
  });
