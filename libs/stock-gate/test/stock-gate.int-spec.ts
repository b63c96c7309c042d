import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { AddressInfo, Server, Socket, connect, createServer } from 'node:net';
import Redis from 'ioredis';
import { loadStackConfig } from '@checkout/local-stack';
import { StockGate } from '../src';

const url = process.env.REDIS_URL ?? loadStackConfig().redis.url;
const tenant = `gate-${randomBytes(3).toString('hex')}`;
const sku = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

/**
 * A TCP proxy in front of the real Redis whose replies can be held back (a Redis or event loop that is slow
 * to answer) or delayed, while the commands still reach Redis.
 */
async function replyProxy(target: URL): Promise<{
  url: string;
  holdReplies(): void;
  releaseReplies(): void;
  delayReplies(ms: number): void;
  close(): Promise<void>;
}> {
  let holding = false;
  let delayMs = 0;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      const deliver = () => client.write(chunk);
      if (holding) held.push(deliver);
      else if (delayMs > 0) setTimeout(deliver, delayMs);
      else deliver();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    holdReplies: () => {
      holding = true;
    },
    releaseReplies: () => {
      holding = false;
      for (const deliver of held.splice(0)) deliver();
    },
    delayReplies: (ms) => {
      delayMs = ms;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('stock gate on the real Redis', () => {
  const gates: StockGate[] = [];
  let gate: StockGate;

  beforeAll(async () => {
    // Several connections, so the takes really race at the server rather than queue on one socket. The
    // generous command timeout keeps a loaded CI machine from turning slow answers into GateUnavailable:
    // this spec is about counting, the fail-fast default is for checkouts.
    for (let i = 0; i < 4; i += 1) gates.push(StockGate.connect(url, { commandTimeout: 15_000 }));
    gate = gates[0];
    for (const g of gates) assert.ok(await g.ready(5_000), `Redis at ${url} is not reachable`);
  });
  afterAll(async () => {
    await Promise.all(gates.map((g) => g.close()));
  });

  it('grants exactly 500 of 2,000 concurrent takes for 500 units and never goes below 0', async () => {
    const hot = sku('HOT');
    assert.deepEqual(await gate.enable(tenant, hot, 500), { outcome: 'Enabled' });
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 2_000 }, (_, i) =>
        gates[i % gates.length].take(tenant, randomUUID(), [{ sku: hot, quantity: 1 }]),
      ),
    );
    const ms = Date.now() - started;
    const unavailable = results.filter((r) => r.outcome === 'GateUnavailable');
    assert.equal(unavailable.length, 0, `Redis did not answer: ${JSON.stringify(unavailable[0])}`);
    const granted = results.filter((r) => r.outcome === 'Granted').length;
    const refused = results.filter((r) => r.outcome === 'Insufficient').length;
    assert.equal(granted, 500);
    assert.equal(refused, 1_500);
    assert.equal(await gate.remaining(tenant, hot), 0);
    console.log(`2,000 concurrent takes answered in ${ms} ms`);
  });

  it('takes a multi-line order all or nothing and never below 0 for a quantity larger than what is left', async () => {
    const a = sku('A');
    const b = sku('B');
    await gate.enable(tenant, a, 5);
    await gate.enable(tenant, b, 2);
    const refused = await gate.take(tenant, 'h1', [
      { sku: a, quantity: 3 },
      { sku: b, quantity: 3 },
    ]);
    assert.deepEqual(refused, { outcome: 'Insufficient', sku: b, remaining: 2 });
    assert.equal(await gate.remaining(tenant, a), 5, 'nothing taken from the first line');
    const granted = await gate.take(tenant, 'h2', [
      { sku: a, quantity: 3 },
      { sku: b, quantity: 2 },
    ]);
    assert.deepEqual(granted, { outcome: 'Granted', gatedSkus: [a, b] });
    assert.equal(await gate.remaining(tenant, a), 2);
    assert.equal(await gate.remaining(tenant, b), 0);
  });

  it('gives units back once per hold, however often it is asked, and a retry of the same hold takes nothing', async () => {
    const s = sku('GB');
    await gate.enable(tenant, s, 10);
    const hold = randomUUID();
    assert.equal((await gate.take(tenant, hold, [{ sku: s, quantity: 4 }])).outcome, 'Granted');
    assert.deepEqual(await gate.take(tenant, hold, [{ sku: s, quantity: 4 }]), { outcome: 'AlreadyHeld' });
    assert.equal(await gate.remaining(tenant, s), 6);
    const backs = await Promise.all([1, 2, 3].map(() => gate.giveBack(tenant, hold)));
    assert.equal(backs.filter((r) => r.outcome === 'Returned').length, 1);
    assert.equal(backs.filter((r) => r.outcome === 'NothingHeld').length, 2);
    assert.equal(await gate.remaining(tenant, s), 10);
  });

  it('settles a paid hold without returning units', async () => {
    const s = sku('ST');
    await gate.enable(tenant, s, 3);
    const hold = randomUUID();
    await gate.take(tenant, hold, [{ sku: s, quantity: 1 }]);
    assert.deepEqual(await gate.settle(tenant, hold), { outcome: 'Settled' });
    assert.deepEqual(await gate.giveBack(tenant, hold), { outcome: 'NothingHeld' });
    assert.equal(await gate.remaining(tenant, s), 2);
  });

  it('takes nothing for a hold marked answered, sold out or not, until its mark is past its time', async () => {
    const s = sku('ANS');
    await gate.enable(tenant, s, 1);
    const [paid, retried, expired] = [randomUUID(), randomUUID(), randomUUID()];
    assert.equal((await gate.take(tenant, paid, [{ sku: s, quantity: 1 }])).outcome, 'Granted');
    assert.deepEqual(await gate.settle(tenant, paid), { outcome: 'Settled' });
    const now = Date.now();
    assert.deepEqual(
      await gate.markAnswered(
        tenant,
        [
          { holdId: paid, untilMs: now + 60_000 },
          { holdId: retried, untilMs: now + 60_000 },
          { holdId: expired, untilMs: now - 1 },
        ],
        now - 10,
      ),
      { outcome: 'Marked' },
    );
    const one = [{ sku: s, quantity: 1 }];
    // Sold out: the retry of the paid checkout is still told apart from a new buyer.
    assert.deepEqual(await gate.take(tenant, paid, one), { outcome: 'Answered' });
    assert.deepEqual(await gate.take(tenant, expired, one), {
      outcome: 'Insufficient',
      sku: s,
      remaining: 0,
    });
    // With units left, an answered hold takes none of them.
    await gate.enable(tenant, s, 5);
    assert.deepEqual(await gate.take(tenant, retried, one), { outcome: 'Answered' });
    assert.equal(await gate.remaining(tenant, s), 5);
    assert.deepEqual(await gate.take(tenant, retried, one, { now: now + 60_000 }), {
      outcome: 'Granted',
      gatedSkus: [s],
    });
    assert.equal((await gate.take(tenant, paid, one, { ignoreAnswered: true })).outcome, 'Granted');
    assert.equal(await gate.remaining(tenant, s), 3);
    // A later mark keeps the later time; a mark call drops the marks past their time.
    const raw = new Redis(url);
    try {
      const key = `stock-gate:{${tenant}}:answered`;
      await gate.markAnswered(tenant, [{ holdId: paid, untilMs: now + 1_000 }], now);
      assert.equal(Number(await raw.zscore(key, paid)), now + 60_000);
      assert.equal(await raw.zscore(key, expired), null, 'dropped by the first call, whose now was after it');
      await gate.markAnswered(tenant, [{ holdId: randomUUID(), untilMs: now + 120_000 }], now + 60_000);
      assert.equal(await raw.zcard(key), 1, 'marks of the first call dropped once past their time');
    } finally {
      raw.disconnect();
    }
  });

  it('passes SKUs without a gate through, re-syncs only a gate that is on, and disabling stops gating', async () => {
    const off = sku('OFF');
    assert.deepEqual(await gate.take(tenant, randomUUID(), [{ sku: off, quantity: 1 }]), {
      outcome: 'NotGated',
    });
    assert.deepEqual(await gate.resync(tenant, off, 7), { outcome: 'NotGated' });
    assert.equal(await gate.remaining(tenant, off), null);

    const on = sku('ON');
    await gate.enable(tenant, on, 10);
    const hold = randomUUID();
    await gate.take(tenant, hold, [{ sku: on, quantity: 2 }]);
    assert.deepEqual(await gate.resync(tenant, on, 3), { outcome: 'Resynced', before: 8 });
    assert.equal(await gate.remaining(tenant, on), 3, 'the database wins');
    assert.deepEqual(await gate.disable(tenant, on), { outcome: 'Disabled' });
    assert.deepEqual(await gate.giveBack(tenant, hold), { outcome: 'Returned' });
    assert.equal(
      await gate.remaining(tenant, on),
      null,
      'a give-back does not turn a disabled gate on again',
    );
  });

  it('keys counters per tenant', async () => {
    const s = sku('T');
    await gate.enable(tenant, s, 1);
    assert.deepEqual(await gate.take(`${tenant}-other`, randomUUID(), [{ sku: s, quantity: 1 }]), {
      outcome: 'NotGated',
    });
    assert.equal(await gate.remaining(tenant, s), 1);
  });

  it('reports GateUnavailable quickly when Redis cannot be reached, so callers fall back to the database', async () => {
    const dead = new StockGate(
      new Redis('redis://127.0.0.1:1', {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        lazyConnect: true,
      }),
    );
    const started = Date.now();
    const r = await dead.take(tenant, randomUUID(), [{ sku: 'X', quantity: 1 }]);
    assert.equal(r.outcome, 'GateUnavailable');
    assert.equal((await dead.giveBack(tenant, 'h')).outcome, 'GateUnavailable');
    assert.ok(Date.now() - started < 2_000);
    await dead.close();
  });

  it('waits for a slow reply instead of treating it as Redis down', async () => {
    const proxy = await replyProxy(new URL(url));
    const slow = StockGate.connect(proxy.url); // the default reply timeout
    try {
      assert.ok(await slow.ready(5_000));
      const s = sku('SLOW');
      await gate.enable(tenant, s, 1);
      proxy.delayReplies(800); // longer than the old 500 ms command timeout that sent checkouts to the database
      assert.deepEqual(await slow.take(tenant, randomUUID(), [{ sku: s, quantity: 1 }]), {
        outcome: 'Granted',
        gatedSkus: [s],
      });
      assert.equal(await gate.remaining(tenant, s), 0);
    } finally {
      await slow.close();
      await proxy.close();
    }
  });

  it('reports a take without a reply as GateUnknown (it may have taken units), and a give-back after it undoes it', async () => {
    const proxy = await replyProxy(new URL(url));
    const stalled = StockGate.connect(proxy.url, { commandTimeout: 300 });
    try {
      assert.ok(await stalled.ready(5_000));
      const s = sku('UNK');
      await gate.enable(tenant, s, 3);
      const hold = randomUUID();
      proxy.holdReplies();
      const take = await stalled.take(tenant, hold, [{ sku: s, quantity: 1 }]);
      assert.equal(take.outcome, 'GateUnknown', JSON.stringify(take));
      assert.equal(await gate.remaining(tenant, s), 2, 'the unanswered take did run at the server');
      proxy.releaseReplies();
      // Redis runs the give-back after the take on the same connection, so it finds the hold and returns it.
      assert.deepEqual(await stalled.giveBack(tenant, hold), { outcome: 'Returned' });
      assert.equal(await gate.remaining(tenant, s), 3);
    } finally {
      await stalled.close();
      await proxy.close();
    }
  });

  it('reports GateUnavailable without sending anything while the connection is down', async () => {
    const down = StockGate.connect('redis://127.0.0.1:1');
    try {
      const r = await down.take(tenant, randomUUID(), [{ sku: 'X', quantity: 1 }]);
      assert.equal(r.outcome, 'GateUnavailable');
      assert.match((r as { reason: string }).reason, /connection is|Stream isn't writeable/);
    } finally {
      await down.close();
    }
  });
});
