import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SagaEvent, parseEvent } from '@checkout/contracts';
import { orderCreatedPayload, rawSagaEvent, scratchDatabase } from '@checkout/testing';
import { EntityManager } from 'typeorm';
import { CreateMessagingTables1764680000000, InboxContext, InboxTransport, lockSaga } from '../src';

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

describe('inbox transport: saga locks taken with the inbox rows (sagaLocks)', () => {
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
});
