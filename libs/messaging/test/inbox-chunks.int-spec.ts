import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SagaEvent, parseEvent } from '@checkout/contracts';
import { orderCreatedPayload, rawSagaEvent, scratchDatabase } from '@checkout/testing';
import { KafkaMessage } from 'kafkajs';
import { Registry } from 'prom-client';
import { EntityManager } from 'typeorm';
import {
  CreateMessagingTables1764680000000,
  InboxContext,
  InboxTransport,
  NonRetryableError,
  lockSaga,
} from '../src';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** An order.created event of a fresh order. */
const orderCreated = (tenantId: string): SagaEvent => {
  const payload = orderCreatedPayload();
  return parseEvent(JSON.stringify(rawSagaEvent('order.created', tenantId, payload.orderId, payload)));
};

/** Counts the statements a transaction's connection runs while fn does. */
async function statementsDuring(tx: EntityManager, fn: () => Promise<void>): Promise<number> {
  const runner = tx.queryRunner!;
  const query = runner.query.bind(runner);
  let count = 0;
  runner.query = ((...args: Parameters<typeof query>) => {
    count += 1;
    return query(...args);
  }) as typeof runner.query;
  try {
    await fn();
  } finally {
    runner.query = query;
  }
  return count;
}

describe('inbox transport: chunks of one transaction and saga locks', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;

  beforeAll(async () => {
    scratch = await scratchDatabase('saga_locks_test', [CreateMessagingTables1764680000000], 4);
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  /** Whether another connection could take the order's lock now. */
  const lockFree = async (e: SagaEvent): Promise<boolean> => {
    const [row] = await scratch.dataSource.query(
      `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got`,
      [`${e.tenantId}/${e.sagaId}`],
    );
    if (row.got) await scratch.dataSource.query(`SELECT pg_advisory_unlock_all()`);
    return row.got as boolean;
  };

  const transport = (
    sagaLocks: boolean,
    seen: (ctx: InboxContext, events: SagaEvent[]) => Promise<void>,
  ): InboxTransport => {
    const t = new InboxTransport({
      name: `locks-${randomUUID().slice(0, 8)}`,
      brokers: ['127.0.0.1:1'],
      dataSource: scratch.dataSource,
      logger: quiet,
      sagaLocks,
    });
    t.addHandler('order.created', (events: SagaEvent[], ctx: InboxContext) => seen(ctx, events), true, {
      batch: true,
    });
    return t;
  };

  it('holds every event’s lock while the handler runs, and a handler’s own lockSaga costs no statement', async () => {
    const events = [orderCreated('t1'), orderCreated('t1'), orderCreated('t2')];
    const observed: { free: boolean[]; statements: number }[] = [];
    const t = transport(true, async (ctx, batch) => {
      const free = await Promise.all(batch.map(lockFree));
      const statements = await statementsDuring(ctx.tx, async () => {
        for (const e of batch) await lockSaga(ctx.tx, e.tenantId, e.sagaId);
      });
      observed.push({ free, statements });
    });
    assert.deepEqual(await t.apply('order.created', events), { applied: 3, duplicates: 0 });
    assert.deepEqual(observed, [{ free: [false, false, false], statements: 0 }]);
    // Released at commit.
    assert.deepEqual(await Promise.all(events.map(lockFree)), [true, true, true]);
  });

  it('without it, the handler’s lockSaga takes the lock with a statement of its own, once per transaction', async () => {
    const e = orderCreated('t1');
    const observed: { freeBefore: boolean; statements: number; freeAfter: boolean }[] = [];
    const t = transport(false, async (ctx) => {
      const freeBefore = await lockFree(e);
      const statements = await statementsDuring(ctx.tx, async () => {
        await lockSaga(ctx.tx, e.tenantId, e.sagaId);
        await lockSaga(ctx.tx, e.tenantId, e.sagaId);
      });
      observed.push({ freeBefore, statements, freeAfter: await lockFree(e) });
    });
    await t.apply('order.created', [e]);
    assert.deepEqual(observed, [{ freeBefore: true, statements: 1, freeAfter: false }]);
  });

  it('takes the locks of duplicates too and applies nothing twice', async () => {
    const e = orderCreated('t1');
    let calls = 0;
    const t = transport(true, async () => {
      calls += 1;
    });
    await t.apply('order.created', [e]);
    assert.deepEqual(await t.apply('order.created', [e]), { applied: 0, duplicates: 1 });
    assert.equal(calls, 1);
  });

  /** A transport whose order.created handler takes one event at a time (no `batch: true`). */
  const perEvent = (
    handle: (e: SagaEvent, ctx: InboxContext) => Promise<void>,
    registry?: Registry,
  ): InboxTransport => {
    const t = new InboxTransport({
      name: `chunks-${randomUUID().slice(0, 8)}`,
      registry,
      brokers: ['127.0.0.1:1'],
      dataSource: scratch.dataSource,
      logger: quiet,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    t.addHandler('order.created', (e: SagaEvent, ctx: InboxContext) => handle(e, ctx), true, {});
    return t;
  };

  const message = (e: SagaEvent, offset: number): KafkaMessage =>
    ({
      key: Buffer.from(e.sagaId),
      value: Buffer.from(JSON.stringify(e)),
      offset: String(offset),
      timestamp: String(Date.now()),
      attributes: 0,
      headers: {},
    }) as KafkaMessage;

  it('applies a chunk of events in one transaction, the handler once per event in offset order', async () => {
    const events = [orderCreated('t1'), orderCreated('t1'), orderCreated('t2')];
    const calls: { eventId: string; txid: string }[] = [];
    const registry = new Registry();
    const t = perEvent(async (e, ctx) => {
      const [row] = await ctx.tx.query(`SELECT txid_current()::text AS txid`);
      calls.push({ eventId: e.eventId, txid: row.txid as string });
    }, registry);
    await t.deliver(
      'order.created',
      0,
      events.map((e, i) => message(e, i)),
    );
    assert.deepEqual(
      calls.map((c) => c.eventId),
      events.map((e) => e.eventId),
    );
    assert.equal(new Set(calls.map((c) => c.txid)).size, 1);
    // Each event of the chunk is timed (its share of the chunk) and counted.
    const metrics = await registry.getMetricsAsJSON();
    const count = (name: string) =>
      metrics
        .find((m) => m.name === name)
        ?.values.filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count') ?? true)
        .reduce((n, v) => n + v.value, 0);
    assert.equal(count('messaging_handler_duration_seconds'), 3);
    assert.equal(count('messaging_consumed_total'), 3);
  });

  it('applies a failing chunk again event by event: each event once, none held back', async () => {
    const events = [orderCreated('t1'), orderCreated('t1'), orderCreated('t1')];
    const applied: { eventId: string; txid: string }[] = [];
    let failuresLeft = 1; // a domain error gives the chunk up at once: then it goes event by event
    const t = perEvent(async (e, ctx) => {
      if (e.eventId === events[1].eventId && failuresLeft > 0) {
        failuresLeft -= 1;
        throw new NonRetryableError('HANDLER_FAILED', 'this event fails while it is in a chunk');
      }
      const [row] = await ctx.tx.query(`SELECT txid_current()::text AS txid`);
      applied.push({ eventId: e.eventId, txid: row.txid as string });
    });
    await t.deliver(
      'order.created',
      0,
      events.map((e, i) => message(e, i)),
    );
    // Rolled-back calls are not counted: keep the last application of each event.
    const last = new Map(applied.map((a) => [a.eventId, a.txid]));
    assert.deepEqual([...last.keys()].sort(), events.map((e) => e.eventId).sort());
    assert.equal(new Set(last.values()).size, 3, 'event by event: a transaction each');
    const [{ n }] = await scratch.dataSource.query(
      `SELECT count(*)::int AS n FROM inbox WHERE event_id = ANY($1)`,
      [events.map((e) => e.eventId)],
    );
    assert.equal(n, 3);
  });

  /**
   * A batch transport that records its contexts: `around` (a lone event's whole transaction), `aroundChunk` (the
   * events of a chunk) and which context each event's part ran in (InboxContext.eventScope).
   */
  const scoped = (fail = false) => {
    const log: string[] = [];
    const t = new InboxTransport({
      name: `scopes-${randomUUID().slice(0, 8)}`,
      brokers: ['127.0.0.1:1'],
      dataSource: scratch.dataSource,
      logger: quiet,
      around: async (event, fn) => {
        log.push(`around ${event.eventId}`);
        return fn();
      },
      aroundChunk: (events) => {
        log.push(`chunk ${events.map((e) => e.eventId).join(',')}`);
        return {
          within: async (event, fn) => {
            log.push(`in ${event.eventId}`);
            return fn();
          },
          end: (error) => void log.push(`end ${error === undefined ? 'ok' : 'failed'}`),
        };
      },
    });
    t.addHandler(
      'order.created',
      async (events: SagaEvent[], ctx: InboxContext) => {
        for (const e of events) await ctx.eventScope(e, async () => void log.push(`part ${e.eventId}`));
        if (fail) throw new NonRetryableError('HANDLER_FAILED', 'the handler refuses the chunk');
      },
      true,
      { batch: true },
    );
    return { t, log };
  };

  it("gives a batch chunk's fresh events one context each, and a lone event one, not two", async () => {
    const [a, b, c] = [orderCreated('t1'), orderCreated('t1'), orderCreated('t2')];
    const { t, log } = scoped();
    await t.apply('order.created', [a]);
    assert.deepEqual(log.splice(0), [`around ${a.eventId}`, `part ${a.eventId}`]);
    assert.deepEqual(await t.apply('order.created', [a, b, c]), { applied: 2, duplicates: 1 });
    assert.deepEqual(log, [
      `chunk ${b.eventId},${c.eventId}`,
      `in ${b.eventId}`,
      `part ${b.eventId}`,
      `in ${c.eventId}`,
      `part ${c.eventId}`,
      'end ok',
    ]);
  });

  it("ends a failed chunk's contexts as failed", async () => {
    const { t, log } = scoped(true);
    const events = [orderCreated('t1'), orderCreated('t1')];
    await assert.rejects(t.apply('order.created', events), /refuses the chunk/);
    assert.equal(log.at(-1), 'end failed');
  });
});
