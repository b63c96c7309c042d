import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import Redis from 'ioredis';
import { loadStackConfig } from '@checkout/local-stack';
import { FAIL_FAST_REDIS, StockGate, gatedSkus, resyncGates } from '../src';

const url = process.env.REDIS_URL ?? loadStackConfig().redis.url;
const tenant = () => `resync-${randomBytes(3).toString('hex')}`;

describe('resyncGates: every gated SKU set from the database (the database wins)', () => {
  let redis: Redis;
  let gate: StockGate;

  beforeAll(async () => {
    redis = new Redis(url, { ...FAIL_FAST_REDIS, commandTimeout: 15_000 });
    gate = new StockGate(redis);
    assert.equal(await gate.ready(5_000), true, 'redis is up');
  });
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
    await gate.close();
  });

  it('lowers a counter above the database at once, raises one below it only once it has been quiet for a run', async () => {
    const [t1, t2] = [tenant(), tenant()];
    cleanup.push(async () => {
      for (const s of ['HOT-1', 'HOT-2', 'GONE']) await gate.disable(t1, s);
      await gate.disable(t2, 'HOT-1');
    });
    await gate.enable(t1, 'HOT-1', 100);
    await gate.enable(t1, 'HOT-2', 7);
    await gate.enable(t1, 'GONE', 3); // gated, but the database has no stock row for it
    await gate.enable(t2, 'HOT-1', 50);
    // Tokens in flight: granted by the gate, not reserved in the database yet (the figure below still has them).
    assert.equal((await gate.take(t1, 'order-a', [{ sku: 'HOT-1', quantity: 30 }])).outcome, 'Granted');
    const db = new Map<string, Map<string, number>>([
      [
        t1,
        new Map([
          ['HOT-1', 90],
          ['HOT-2', 7],
          ['OFF', 40],
        ]),
      ],
      [t2, new Map([['HOT-1', 12]])],
    ]);
    const asked: [string, string[]][] = [];
    const lastSeen = new Map<string, string>();
    const run = () =>
      resyncGates({
        gate,
        redis,
        tenantIds: [t1, t2],
        lastSeen,
        availableOf: async (tenantId, skus) => {
          asked.push([tenantId, skus]);
          return new Map(
            skus.filter((s) => db.get(tenantId)!.has(s)).map((s) => [s, db.get(tenantId)!.get(s)!]),
          );
        },
      });

    const first = await run();

    // Above the database: lowered at once. Below it: maybe tokens in flight, so not raised yet.
    assert.deepEqual(first, {
      outcome: 'Resynced',
      skus: 4,
      corrections: [
        { tenantId: t1, sku: 'GONE', before: 3, after: 0 },
        { tenantId: t2, sku: 'HOT-1', before: 50, after: 12 },
      ],
      deferred: [{ tenantId: t1, sku: 'HOT-1', before: 70, after: 90 }],
    });
    assert.deepEqual(asked, [
      [t1, ['GONE', 'HOT-1', 'HOT-2']],
      [t2, ['HOT-1']],
    ]);
    assert.equal(await gate.remaining(t1, 'HOT-1'), 70);
    assert.equal(await gate.remaining(t1, 'OFF'), null, 'a SKU whose gate is off is not turned on');

    // The SKU is still selling (another take): still not raised.
    assert.equal((await gate.take(t1, 'order-b', [{ sku: 'HOT-1', quantity: 1 }])).outcome, 'Granted');
    db.get(t1)!.set('HOT-1', 89);
    const busy = await run();
    assert.deepEqual(busy.outcome === 'Resynced' && busy.deferred, [
      { tenantId: t1, sku: 'HOT-1', before: 69, after: 89 },
    ]);
    assert.equal(await gate.remaining(t1, 'HOT-1'), 69);

    // A whole interval without a take or give-back: nothing in flight, the database figure wins.
    const quiet = await run();
    assert.deepEqual(quiet, {
      outcome: 'Resynced',
      skus: 4,
      corrections: [{ tenantId: t1, sku: 'HOT-1', before: 69, after: 89 }],
      deferred: [],
    });
    assert.equal(await gate.remaining(t1, 'HOT-1'), 89);
    assert.equal(await gate.remaining(t1, 'HOT-2'), 7);
    assert.equal(await gate.remaining(t2, 'HOT-1'), 12);
    assert.deepEqual(
      await run(),
      { outcome: 'Resynced', skus: 4, corrections: [], deferred: [] },
      'then nothing to fix',
    );
  });

  it('finds every gated SKU of a tenant with SCAN, and only that tenant', async () => {
    const t = tenant();
    const many = Array.from({ length: 1_200 }, (_, i) => `SKU-${String(i).padStart(4, '0')}`);
    await Promise.all(many.map((s) => gate.enable(t, s, 1)));
    await gate.enable(tenant(), 'SKU-0000', 1);

    assert.deepEqual(await gatedSkus(gate, redis, t), many);
    await Promise.all(many.map((s) => gate.disable(t, s)));
  });

  it('Redis down: GateUnavailable and the database is not asked', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((r) => closed.close(() => r()));
    const down = new Redis(`redis://127.0.0.1:${port}`, {
      ...FAIL_FAST_REDIS,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    down.on('error', () => undefined);
    let asked = false;

    const report = await resyncGates({
      gate: new StockGate(down),
      redis: down,
      tenantIds: ['acme'],
      lastSeen: new Map(),
      availableOf: async () => {
        asked = true;
        return new Map();
      },
    });

    assert.equal(report.outcome, 'GateUnavailable');
    assert.equal(asked, false);
    down.disconnect();
  });
});
