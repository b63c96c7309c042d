import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startRedis, stopRedis } from '@checkout/local-stack';
import { StockGate } from '@checkout/stock-gate';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { call, checkout, checkoutBody, pool, priceSku, stockSku, uniqueSku } from './order-api';

const stack = loadStackConfig();

describe('flash-sale gate after a Redis restart (real redis-server of the stack, restarted empty)', () => {
  let gate: StockGate;
  beforeAll(() => {
    gate = StockGate.connect(stack.redis.url, { password: stack.auth?.redisPassword });
  });
  afterAll(async () => {
    await startRedis(stack); // a no-op when it is up
    await gate.close();
  });

  const remaining = async (sku: string): Promise<number | null | undefined> => {
    const r = await gate.remaining('acme', sku);
    return typeof r === 'number' || r === null ? r : undefined; // GateUnavailable: Redis is down
  };

  it('re-arms the gate from flash_sales with the units left, then sells exactly the rest', async () => {
    const sku = uniqueSku('REARM');
    await priceSku(sku);
    const inInventory = await stockSku(sku, 30);
    const on = await call('PUT', `/v1/admin/flash-sales/${sku}`, {
      body: inInventory ? { enabled: true } : { enabled: true, available: 30 },
    });
    assert.equal(on.status, 200, on.text);
    const requests = Array.from({ length: 10 }, () => ({ body: checkoutBody(sku), key: randomUUID() }));
    const first = await pool(requests, 10, (r) => checkout(r.body, r.key));
    assert.deepEqual(
      first.map((a) => a.status),
      Array(10).fill(202),
    );
    assert.equal(await gate.ready(5_000), true);
    assert.equal(await remaining(sku), 20);

    // Redis keeps the counters in memory only (no RDB, no AOF): the restart loses every gate.
    await stopRedis(stack);
    await startRedis(stack);
    assert.equal(await gate.ready(10_000), true);

    // The order service notices its connection coming back and re-arms at once (its periodic pass is 15 s).
    const rearmed = await waitFor(
      'the gate counter to be re-armed',
      async () => (await remaining(sku)) ?? undefined,
      {
        timeoutMs: 12_000,
        intervalMs: 100,
      },
    );
    assert.equal(rearmed, 20, 'primed 30, 10 orders since: 20 left');

    const second = await pool(Array.from({ length: 40 }), 20, () =>
      checkout(checkoutBody(sku), randomUUID()),
    );
    const accepted = second.filter((a) => a.status === 202).length;
    const refused = second.filter((a) => a.status === 409 && a.json.error === 'OUT_OF_STOCK');
    assert.equal(accepted, 20, 'exactly the 20 units left are sold');
    assert.equal(refused.length, 20);
    // The gate refused them (its answer names the units it has left), not the database.
    assert.ok(refused.every((a) => a.json.remaining === 0 && a.json.sku === sku));
    assert.equal(await remaining(sku), 0);
    // Sold out at a gate Redis lost and got back: a retry of a checkout from before the restart is replayed.
    const retry = await checkout(requests[3].body, requests[3].key);
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.text, first[3].text);
  });

  it('leaves a gate that is off alone', async () => {
    const sku = uniqueSku('REARM-OFF');
    await priceSku(sku);
    await stockSku(sku, 5);
    await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: true, available: 5 } });
    await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: false } });
    // An enabled SKU re-armed by the same pass marks the moment the pass has run.
    const marker = uniqueSku('REARM-MARK');
    await priceSku(marker);
    await call('PUT', `/v1/admin/flash-sales/${marker}`, { body: { enabled: true, available: 3 } });
    await stopRedis(stack);
    await startRedis(stack);
    assert.equal(await gate.ready(10_000), true);
    const units = await waitFor(
      'the marker gate to be re-armed',
      async () => (await remaining(marker)) ?? undefined,
      {
        timeoutMs: 12_000,
        intervalMs: 100,
      },
    );
    assert.equal(units, 3);
    assert.equal(await remaining(sku), null, 'a flash sale that is off stays off');
  });
});
