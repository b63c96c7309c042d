import { afterAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { call, checkout, checkoutBody, priceSku, stockSku, uniqueSku } from './order-api';

const stack = loadStackConfig();

describe('order: a retry with the same Idempotency-Key is replayed, never refused by the flash-sale gate', () => {
  const redis = new Redis(stack.redis.url, { password: stack.auth?.redisPassword, lazyConnect: true });
  afterAll(() => redis.quit());

  it('given the last unit sold to a paid order, its retry replays the 202 instead of OUT_OF_STOCK', async () => {
    const sku = uniqueSku('REPLAY');
    await priceSku(sku);
    assert.ok(await stockSku(sku, 1), 'inventory has the unit');
    const on = await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: true, available: 1 } });
    assert.equal(on.status, 200, on.text);
    const key = randomUUID();
    const body = checkoutBody(sku);
    const first = await checkout(body, key);
    assert.equal(first.status, 202, first.text);
    const orderId = first.json.orderId as string;
    // Paid: the gate's hold is settled (sold for good), so the gate itself has nothing left for this key.
    await waitFor(
      `order ${orderId} paid`,
      async () => {
        const o = await call('GET', `/v1/orders/${orderId}`);
        return ['PAID', 'SHIPPED'].includes(o.json.status as string);
      },
      { timeoutMs: 90_000 },
    );
    assert.equal((await checkout(checkoutBody(sku))).status, 409, 'sold out for a new buyer');
    const retry = await checkout(body, key);
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.text, first.text, 'byte for byte the first answer');
    const reused = await checkout({ ...body, customerId: 'someone-else' }, key);
    assert.equal(reused.status, 422);
    assert.equal(reused.json.error, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('replays the retry of an order placed before the gate was on, whose answer the gate did not know', async () => {
    const sku = uniqueSku('REPLAY-LATE');
    await priceSku(sku);
    assert.ok(await stockSku(sku, 1), 'inventory has the unit');
    const key = randomUUID();
    const body = checkoutBody(sku);
    const first = await checkout(body, key);
    assert.equal(first.status, 202, first.text);
    // The answer unknown to the gate: as after a Redis that lost its data, or an order from before this release.
    await redis.del('stock-gate:{acme}:answered');
    // Sold out at the gate: turning it on marks the SKU's answered checkouts first.
    const on = await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: true, available: 0 } });
    assert.equal(on.status, 200, on.text);
    const refused = await checkout(checkoutBody(sku));
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.remaining, 0, 'refused by the gate');
    const retry = await checkout(body, key);
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.text, first.text);
  });
});
