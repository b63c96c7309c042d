import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import {
  connectorRunning,
  loadStackConfig,
  registerConnectors,
  stackKafka,
  startConnect,
  stopConnect,
  ensureJars,
} from '@checkout/local-stack';
import {
  TopicReader,
  orderCreatedPayload,
  rawSagaEvent,
  scratchDatabase,
  serviceDataSource,
  waitFor,
} from '@checkout/testing';
import {
  CreateMessagingTables1764680000000,
  InboxContext,
  InboxTransport,
  consoleLogger,
  NonRetryableError,
  Outcome,
  OutboxWriter,
} from '../src';

class CreateEffects1764680000001 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    // No unique key on purpose: applying an event twice would show up as two rows.
    await q.query(`CREATE TABLE effects (event_id uuid NOT NULL, order_id uuid NOT NULL)`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE effects`);
  }
}

const traceparent = () => `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;

describe('outbox -> Debezium -> Kafka -> consumer with inbox', () => {
  const writer = new OutboxWriter('order');
  const outcomes: { outcome: Outcome; eventId: string | null; orderId: string | null }[] = [];
  const failing = new Set<string>();
  const poison = new Set<string>();
  let orderDb: DataSource;
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let reader: TopicReader;
  let dlqReader: TopicReader;
  let consumerName: string;

  const newConsumer = () => {
    const transport = new InboxTransport({
      name: consumerName,
      brokers: [loadStackConfig().kafka.bootstrap],
      dataSource: scratch.dataSource,
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 50 },
      logger: process.env.TEST_LOGS
        ? consoleLogger
        : { info: () => undefined, warn: () => undefined, error: () => undefined },
      onProcessed: (outcome, event) =>
        outcomes.push({
          outcome,
          eventId: event?.eventId ?? null,
          orderId: (event?.payload as { orderId?: string })?.orderId ?? null,
        }),
    });
    transport.addHandler(
      'order.created',
      async (event: SagaEvent<'order.created'>, { tx }: InboxContext) => {
        if (poison.has(event.payload.orderId))
          throw new NonRetryableError('ORDER.UNKNOWN_TENANT', 'tenant does not exist');
        if (failing.has(event.payload.orderId)) throw new Error('handler keeps failing');
        await tx.query('INSERT INTO effects (event_id, order_id) VALUES ($1, $2)', [
          event.eventId,
          event.payload.orderId,
        ]);
      },
      true,
    );
    return {
      start: () =>
        new Promise<void>((resolve, reject) =>
          transport.listen((error?: unknown) => (error ? reject(error) : resolve())),
        ),
      stop: () => transport.close(),
    };
  };

  const publish = (payload = orderCreatedPayload(), extra: { correlationId?: string } = {}) =>
    orderDb.transaction((tx) =>
      writer.append(tx, {
        type: 'order.created',
        tenantId: 'acme',
        sagaId: payload.orderId,
        payload,
        traceparent: traceparent(),
        ...extra,
      }),
    );

  const effectsOf = async (eventId: string) =>
    Number(
      (
        await scratch.dataSource.query('SELECT count(*)::int AS n FROM effects WHERE event_id = $1', [
          eventId,
        ])
      )[0].n,
    );

  beforeAll(async () => {
    orderDb = await serviceDataSource('order_svc');
    scratch = await scratchDatabase('messaging_test', [
      CreateMessagingTables1764680000000,
      CreateEffects1764680000001,
    ]);
    consumerName = `relay-test-${randomBytes(4).toString('hex')}`;
    reader = await new TopicReader(['order.created']).start();
    dlqReader = await new TopicReader(['order.created.dlq']).start();
  });

  afterAll(async () => {
    await reader.stop();
    await dlqReader.stop();
    await orderDb.destroy();
    await scratch.drop();
  });

  it('relays a committed event with the order id as key and the envelope as headers', async () => {
    const event = await publish();
    const [message] = await reader.waitFor((m) => m.headers.eventId === event.eventId);
    assert.equal(message.key, event.sagaId);
    assert.deepEqual(message.json(), event);
    assert.equal(message.headers.eventType, 'order.created');
    assert.equal(message.headers.tenantId, 'acme');
    assert.equal(message.headers.sagaId, event.sagaId);
    assert.equal(message.headers.correlationId, event.correlationId);
    assert.equal(message.headers.traceparent, event.traceparent);
    assert.equal(message.headers.sequence, '1');
  });

  it('publishes nothing for a rolled-back transaction', async () => {
    const rolledBack = orderCreatedPayload();
    const marker = orderCreatedPayload({ orderId: rolledBack.orderId });
    await assert.rejects(
      orderDb.transaction(async (tx) => {
        await writer.append(tx, {
          type: 'order.created',
          tenantId: 'acme',
          sagaId: rolledBack.orderId,
          payload: rolledBack,
        });
        throw new Error('business rule failed after the event was written');
      }),
      /business rule failed/,
    );
    // Same key, same partition: once the later marker is on the topic, the rolled-back event would be before it.
    const committed = await publish(marker);
    await reader.waitFor((m) => m.headers.eventId === committed.eventId);
    const forOrder = reader.matching((m) => m.key === rolledBack.orderId);
    assert.deepEqual(
      forOrder.map((m) => m.headers.eventId),
      [committed.eventId],
    );
  });

  it('applies an event once even when Kafka delivers it twice (offsets replayed)', async () => {
    const event = await publish();
    let consumer = newConsumer();
    await consumer.start();
    await waitFor('first delivery applied', async () =>
      outcomes.some((o) => o.eventId === event.eventId && o.outcome === 'applied'),
    );
    await consumer.stop();
    assert.equal(await effectsOf(event.eventId), 1);

    const admin = stackKafka(loadStackConfig()).admin();
    await admin.connect();
    // Back by one on every partition: the newest message of each is delivered again, this event among them (it
    // is the last one published). Back to the earliest would replay every order.created of the run before it.
    const [committed] = await admin.fetchOffsets({ groupId: consumerName, topics: ['order.created'] });
    await admin.setOffsets({
      groupId: consumerName,
      topic: 'order.created',
      partitions: committed.partitions
        .filter((p) => Number(p.offset) > 0)
        .map((p) => ({ partition: p.partition, offset: String(Number(p.offset) - 1) })),
    });
    await admin.disconnect();

    consumer = newConsumer();
    await consumer.start();
    await waitFor(
      'redelivery seen as duplicate',
      async () => outcomes.some((o) => o.eventId === event.eventId && o.outcome === 'duplicate'),
      { timeoutMs: 60_000 },
    );
    await consumer.stop();
    assert.equal(await effectsOf(event.eventId), 1, 'the redelivered event must not be applied again');
  });

  it('parks an invalid event on the DLQ with its reason, and a handler that keeps failing after its retries', async () => {
    const orderId = randomUUID();
    const invalidId = randomUUID();
    // A producer bug: a row that bypasses the writer's validation (quantity 0).
    const bad = {
      ...orderCreatedPayload({ orderId }),
      lines: [{ sku: 'SKU-1', quantity: 0, unitPrice: 1, discount: 0, lineTotal: 0 }],
    };
    const envelope = rawSagaEvent('order.created', 'acme', orderId, bad, { eventId: invalidId });
    await orderDb.query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id, sequence, payload)
       VALUES ($1, 'order', $2::text, 'order.created', 1, 'acme', $2::uuid, $2::text, 1, $3)`,
      [invalidId, orderId, JSON.stringify(envelope)],
    );
    const keepsFailing = orderCreatedPayload();
    failing.add(keepsFailing.orderId);
    const failingEvent = await publish(keepsFailing);
    const poisoned = orderCreatedPayload();
    poison.add(poisoned.orderId);
    const poisonEvent = await publish(poisoned);

    const consumer = newConsumer();
    await consumer.start();
    try {
      const mine = (m: { headers: Record<string, string> }) => m.headers['dlq-consumer'] === consumerName;
      const [invalid] = await dlqReader.waitFor((m) => mine(m) && m.headers.eventId === invalidId, {
        timeoutMs: 60_000,
      });
      assert.equal(invalid.headers['dlq-code'], 'CONTRACT.INVALID_PAYLOAD');
      assert.match(invalid.headers['dlq-reason'], /payload\.lines\.0\.quantity/);
      assert.equal(invalid.headers['dlq-original-topic'], 'order.created');

      const [handlerFailed] = await dlqReader.waitFor(
        (m) => mine(m) && m.headers.eventId === failingEvent.eventId,
        { timeoutMs: 60_000 },
      );
      assert.equal(handlerFailed.headers['dlq-code'], 'HANDLER_FAILED');
      assert.equal(handlerFailed.headers['dlq-attempts'], '3');
      assert.match(handlerFailed.headers['dlq-reason'], /handler keeps failing/);

      const [nonRetryable] = await dlqReader.waitFor(
        (m) => mine(m) && m.headers.eventId === poisonEvent.eventId,
        { timeoutMs: 60_000 },
      );
      assert.equal(nonRetryable.headers['dlq-code'], 'ORDER.UNKNOWN_TENANT');
      assert.equal(nonRetryable.headers['dlq-attempts'], '1');
    } finally {
      await consumer.stop();
    }
    assert.equal(await effectsOf(invalidId), 0);
    assert.equal(await effectsOf(failingEvent.eventId), 0);
  });

  it('refuses to write an event outside a transaction, and an event that breaks its contract', async () => {
    await assert.rejects(
      writer.append(orderDb.manager, {
        type: 'order.created',
        tenantId: 'acme',
        sagaId: randomUUID(),
        payload: orderCreatedPayload(),
      }),
      /inside the transaction/,
    );
    const payload = { ...orderCreatedPayload(), total: -1 };
    await assert.rejects(
      orderDb.transaction((tx) =>
        writer.append(tx, { type: 'order.created', tenantId: 'acme', sagaId: payload.orderId, payload }),
      ),
      /total/,
    );
  });

  it('loses no event when Kafka Connect restarts while events are being written', async () => {
    const config = loadStackConfig();
    const tag = `restart-${randomUUID()}`;
    const total = 150;
    const written: SagaEvent[] = [];
    let restarted = false;
    const writing = (async () => {
      for (let i = 0; i < total; i++) {
        written.push(await publish(orderCreatedPayload(), { correlationId: tag }));
        // Keep writing at a steady pace until the restart has happened, so writes straddle it.
        if (i > total / 3 && !restarted)
          await waitFor('connect restart to begin', async () => restarted || i % 10 !== 0, {
            timeoutMs: 60_000,
            intervalMs: 20,
          });
      }
    })();
    await waitFor('a third of the events written', async () => written.length >= total / 3, {
      timeoutMs: 60_000,
      intervalMs: 20,
    });
    await stopConnect(config);
    restarted = true;
    await startConnect(
      config,
      ensureJars(config, () => undefined),
    );
    await registerConnectors(config);
    await waitFor('order-outbox RUNNING', () => connectorRunning(config, 'order-outbox'), {
      timeoutMs: 120_000,
    });
    await writing;
    const ids = new Set(written.map((e) => e.eventId));
    const arrived = await reader.waitFor((m) => m.headers.correlationId === tag, {
      count: total,
      timeoutMs: 120_000,
    });
    const distinct = new Set(arrived.map((m) => m.headers.eventId));
    assert.equal([...ids].filter((id) => !distinct.has(id)).length, 0, 'every committed event reached Kafka');
    assert.equal(distinct.size, total);
  });
});
