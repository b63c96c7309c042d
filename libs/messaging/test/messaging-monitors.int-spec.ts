import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { dlqTopic } from '@checkout/contracts';
import { loadStackConfig, stackKafka } from '@checkout/local-stack';
import { orderCreatedPayload, scratchDatabase } from '@checkout/testing';
import {
  ConsumerLagMonitor,
  KafkaOffsetReader,
  MESSAGING_MIGRATIONS,
  OutboxMonitor,
  OutboxWriter,
} from '../src';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('outbox monitor: unconfirmed events, relay slot, retention', () => {
  const slot = `monitor_${randomBytes(4).toString('hex')}`;
  const writer = new OutboxWriter('order');
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let registry: Registry;
  let monitor: OutboxMonitor;

  const publish = (count: number) =>
    scratch.dataSource.transaction(async (tx) => {
      for (let i = 0; i < count; i += 1) {
        await writer.append(tx, {
          type: 'order.created',
          tenantId: 'acme',
          sagaId: randomUUID(),
          payload: orderCreatedPayload(),
        });
      }
    });
  const relayConfirmsEverything = () =>
    scratch.dataSource.query(`SELECT pg_replication_slot_advance($1, pg_current_wal_lsn())`, [slot]);
  const outboxRows = async () =>
    Number((await scratch.dataSource.query(`SELECT count(*) AS n FROM outbox`))[0].n);

  beforeAll(async () => {
    scratch = await scratchDatabase('monitor', MESSAGING_MIGRATIONS);
    registry = new Registry();
    monitor = new OutboxMonitor({
      dataSource: scratch.dataSource,
      slotName: slot,
      registry,
      logger: quiet,
      retention: { outboxMs: 0, inboxMs: 3_600_000, batchSize: 2, maxBatches: 10 },
    });
  });

  afterAll(async () => {
    await scratch.dataSource.query(
      `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`,
      [slot],
    );
    await scratch.drop();
  });

  it('without a relay slot every committed event is unconfirmed and the slot gauge says 0', async () => {
    await publish(2);
    const probe = await monitor.probe();
    assert.deepEqual(
      { slotPresent: probe.slotPresent, unconfirmed: probe.unconfirmed },
      {
        slotPresent: false,
        unconfirmed: 2,
      },
    );
    assert.match(await registry.metrics(), /outbox_relay_slot_present 0/);
    // Nothing relays this outbox: retention must not delete a single row.
    assert.deepEqual(await monitor.prune(), { outbox: 0, inbox: 0 });
    assert.equal(await outboxRows(), 2);
  });

  it('counts what was written after the confirmed position, and nothing once the relay confirmed it', async () => {
    await scratch.dataSource.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    await publish(3);
    const behind = await monitor.probe();
    assert.equal(behind.slotPresent, true);
    assert.equal(behind.unconfirmed, 3, 'the two rows before the slot was created are behind its start');
    assert.ok(behind.oldestAgeSeconds >= 0);
    assert.match(await registry.metrics(), /outbox_unconfirmed_events 3/);

    await relayConfirmsEverything();
    const caughtUp = await monitor.probe();
    assert.deepEqual(
      { unconfirmed: caughtUp.unconfirmed, age: caughtUp.oldestAgeSeconds },
      { unconfirmed: 0, age: 0 },
    );
  });

  it('retention deletes confirmed rows in batches and keeps the ones the relay has not confirmed', async () => {
    await publish(1); // written after the confirmed position
    const pruned = await monitor.prune();
    assert.equal(pruned.outbox, 5, 'all five confirmed rows, in batches of two');
    assert.equal(await outboxRows(), 1);
    assert.equal((await monitor.probe()).unconfirmed, 1);
    assert.match(await registry.metrics(), /messaging_rows_pruned_total\{table="outbox"\} 5/);
  });

  it('retention deletes inbox rows older than the inbox retention only', async () => {
    await scratch.dataSource.query(
      `INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id, processed_at)
       VALUES ('c', $1, 'order.created', 'acme', $2, now() - interval '2 hours'),
              ('c', $3, 'order.created', 'acme', $2, now() - interval '3 hours'),
              ('c', $4, 'order.created', 'acme', $2, now())`,
      [randomUUID(), randomUUID(), randomUUID(), randomUUID()],
    );
    assert.equal((await monitor.prune()).inbox, 2);
    const [{ n }] = await scratch.dataSource.query(`SELECT count(*) AS n FROM inbox`);
    assert.equal(Number(n), 1);
  });
});

describe('outbox monitor of a consumer-only database (no outbox, no slot)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;

  beforeAll(async () => {
    scratch = await scratchDatabase('inbox_only', MESSAGING_MIGRATIONS);
    await scratch.dataSource.query(`DROP TABLE outbox`);
  });

  afterAll(async () => {
    await scratch.drop();
  });

  it('retention prunes the inbox and never touches the missing outbox; no relay gauges are registered', async () => {
    const registry = new Registry();
    const monitor = new OutboxMonitor({
      dataSource: scratch.dataSource,
      registry,
      logger: quiet,
      retention: { outboxMs: 0, inboxMs: 3_600_000, batchSize: 2, maxBatches: 10 },
    });
    await scratch.dataSource.query(
      `INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id, processed_at)
       VALUES ('c', $1, 'order.created', 'acme', $3, now() - interval '2 hours'),
              ('c', $2, 'order.created', 'acme', $3, now())`,
      [randomUUID(), randomUUID(), randomUUID()],
    );
    assert.deepEqual(await monitor.prune(), { outbox: 0, inbox: 1 });
    const metrics = await registry.metrics();
    assert.doesNotMatch(metrics, /outbox_/);
    assert.match(metrics, /messaging_rows_pruned_total\{table="inbox"\} 1/);
    await assert.rejects(monitor.probe(), /no outbox/);
  });
});

describe('consumer lag monitor: lag per topic and dead-letter depth, from the broker', () => {
  const config = loadStackConfig();
  const topic = `lag-monitor-${randomBytes(4).toString('hex')}`;
  const group = `lag-monitor-group-${randomBytes(4).toString('hex')}`;
  const kafka = stackKafka(config, 'lag-monitor-spec');
  const admin = kafka.admin();
  let monitor: ConsumerLagMonitor;
  const registry = new Registry();

  beforeAll(async () => {
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 2, replicationFactor: 1 },
        { topic: dlqTopic(topic), numPartitions: 1, replicationFactor: 1 },
      ],
    });
    const producer = kafka.producer();
    await producer.connect();
    const msgs = (n: number, partition: number) =>
      Array.from({ length: n }, (_, i) => ({ partition, value: `m${i}` }));
    await producer.send({ topic, messages: [...msgs(5, 0), ...msgs(2, 1)] });
    await producer.send({ topic: dlqTopic(topic), messages: msgs(3, 0) });
    await producer.disconnect();
    monitor = new ConsumerLagMonitor({
      groupId: group,
      topics: [topic],
      brokers: [config.kafka.bootstrap],
      registry,
    });
  });

  afterAll(async () => {
    await monitor.close();
    await admin.deleteGroups([group]).catch(() => undefined);
    await admin.deleteTopics({ topics: [topic, dlqTopic(topic)] });
    await admin.disconnect();
  });

  it('a group that never committed lags by everything on the topic', async () => {
    const probe = await monitor.probe();
    assert.equal(probe.lag[topic], 7);
    assert.equal(probe.dlq[dlqTopic(topic)], 3);
  });

  it('lag is measured from the committed offsets', async () => {
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '3' }] });
    const probe = await monitor.probe();
    assert.equal(probe.lag[topic], 2 + 2);
    const text = await registry.metrics();
    assert.match(text, new RegExp(`messaging_consumer_lag\\{consumer="${group}",topic="${topic}"\\} 4`));
    assert.match(text, new RegExp(`messaging_dlq_messages\\{topic="${dlqTopic(topic)}"\\} 3`));
  });

  it('groups sharing a reader each get their own lag, and a topic without its dead-letter topic fails the probe until it exists', async () => {
    const other = `lag-monitor-other-${randomBytes(4).toString('hex')}`;
    const offsets = new KafkaOffsetReader([config.kafka.bootstrap], 'lag-monitor-spec-shared');
    const shared = (topics: string[], groupId: string) =>
      new ConsumerLagMonitor({ groupId, topics, brokers: [config.kafka.bootstrap], offsets });
    const first = shared([topic], group);
    const second = shared([topic, other], `${group}-b`);
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic: other, numPartitions: 1 }] });
      assert.deepEqual((await first.probe()).lag, { [topic]: 2 + 2 });
      // the dead-letter topic of `other` does not exist yet: no half-read gauges
      await assert.rejects(second.probe(), /does not host this topic-partition|UNKNOWN_TOPIC/i);
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic: dlqTopic(other), numPartitions: 1 }],
      });
      assert.deepEqual(await second.probe(), {
        lag: { [topic]: 7, [other]: 0 },
        dlq: { [dlqTopic(topic)]: 3, [dlqTopic(other)]: 0 },
      });
      // closing a monitor leaves the reader it shares open
      await first.close();
      assert.equal((await second.probe()).lag[topic], 7);
    } finally {
      await offsets.close();
      await admin.deleteGroups([`${group}-b`]).catch(() => undefined);
      await admin.deleteTopics({ topics: [other, dlqTopic(other)] }).catch(() => undefined);
    }
  });
});
