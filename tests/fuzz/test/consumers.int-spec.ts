import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Producer } from 'kafkajs';
import { EventType, SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import { DB_SERVICES, loadStackConfig, stackKafka } from '@checkout/local-stack';
import { TopicReader } from '@checkout/testing';
import { TableWatch } from '../src/db';
import { CONSUMERS, PoisonMessage, poison } from '../src/events';
import { checkProperty } from '../src/runner';

/** Batches of poison per topic in CI (FUZZ_RUNS for a deep run); each batch holds one to six messages. */
const BATCHES_PER_TOPIC = 2;

/** Tables written at rest by background work, not by events (Debezium's heartbeat row). */
const BACKGROUND_TABLES = ['debezium_heartbeat'];

/**
 * Issue 18, scenario 5: for every consumed topic, malformed or schema-violating events (and, on order.created,
 * well-formed events of an unknown tenant or a wrong sagaId) go to `<topic>.dlq` once per consuming service,
 * with a code and a reason, and no consuming service writes a row. FUZZ_RUNS / FUZZ_SEED as for HTTP.
 */
describe('fuzz: every consumer parks poison on the DLQ with a reason and changes nothing', () => {
  let producer: Producer;
  let reader: TopicReader;
  const watches = new Map<string, TableWatch>();

  beforeAll(async () => {
    producer = stackKafka(loadStackConfig(), 'fuzz-consumers').producer();
    await producer.connect();
    reader = await new TopicReader(SAGA_TOPICS.map(dlqTopic)).start();
    for (const s of DB_SERVICES) watches.set(s.name, await TableWatch.open(s.database, BACKGROUND_TABLES));
  });

  afterAll(async () => {
    await producer?.disconnect();
    await reader?.stop();
    for (const w of watches.values()) await w.close();
  });

  /**
   * Publishes a batch of poison on `topic`, waits for one dead letter per consumer and message; returns the
   * tables of the consuming services that changed meanwhile.
   */
  async function publish(topic: EventType, batch: PoisonMessage[]): Promise<string[]> {
    const consumers = CONSUMERS[topic];
    const services = consumers.map((c) => watches.get(c)!);
    const before = await Promise.all(services.map((w) => w.marks()));
    await producer.send({ topic, messages: batch.map((m) => ({ key: m.key, value: m.value })) });
    for (const m of batch) {
      const letters = await reader.waitFor((l) => l.key === m.key, {
        count: consumers.length,
        timeoutMs: 60_000,
      });
      const by = letters.map((l) => l.headers['dlq-consumer']).sort();
      for (const c of consumers)
        assert.ok(
          by.some((b) => b === c || b.startsWith(`${c}-`)),
          `${m.kind} message on ${topic} not parked by ${c} (parked by ${by.join(', ')}): ${m.value.toString('latin1').slice(0, 300)}`,
        );
      for (const l of letters) {
        assert.match(
          l.headers['dlq-code'] ?? '',
          /^[A-Z-]+\.[A-Z_]+$/,
          `dead letter of ${m.kind} has a code`,
        );
        assert.ok((l.headers['dlq-reason'] ?? '').length > 0, `dead letter of ${m.kind} has a reason`);
        assert.equal(l.headers['dlq-original-topic'], topic);
        assert.equal(l.value, m.value.toString('utf8'), 'the dead letter keeps the original message');
      }
    }
    const after = await Promise.all(services.map((w) => w.marks()));
    return services.flatMap((w, i) =>
      TableWatch.changed(before[i], after[i]).map((c) => `${w.database}.${c}`),
    );
  }

  /** Parked means applied nowhere: no consuming service wrote a row for any message of the batch. */
  async function probe(topic: EventType, batch: PoisonMessage[]): Promise<void> {
    const changed = await publish(topic, batch);
    if (changed.length === 0) return;
    // Background work of earlier specs may write meanwhile: at rest, the same poison (new keys) must write again.
    await Promise.all(CONSUMERS[topic].map((c) => watches.get(c)!.quiet()));
    const confirmed = await publish(
      topic,
      batch.map((m) => ({ ...m, key: randomUUID() })),
    );
    if (confirmed.length === 0)
      console.warn(`not confirmed (background write?): poison on ${topic}: ${changed.join(', ')}`);
    assert.deepEqual(confirmed, [], `consumers of ${topic} wrote rows for poison`);
  }

  for (const topic of SAGA_TOPICS) {
    it(`${topic}: ${CONSUMERS[topic].join(', ')}`, async () => {
      await Promise.all(CONSUMERS[topic].map((c) => watches.get(c)!.quiet()));
      await checkProperty(
        `poison on ${topic}`,
        fc.asyncProperty(fc.array(poison(topic), { minLength: 1, maxLength: 6 }), (batch) =>
          probe(topic, batch),
        ),
        BATCHES_PER_TOPIC,
      );
    });
  }
});
