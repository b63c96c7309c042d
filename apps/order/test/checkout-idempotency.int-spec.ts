import { beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { deleteExpiredIdempotencyKeys } from '../src/checkout/database/idempotency.repository';
import { requestHash } from '../src/checkout/domain/request-hash';
import {
  ACME,
  GLOBEX,
  checkout,
  checkoutBody,
  priceSku,
  stockSku,
  uniqueSku,
  suiteDataSource,
} from './order-api';

describe('checkout idempotency keys (order service over HTTP, real PostgreSQL)', () => {
  const db = suiteDataSource('order_svc', 3);
  const sku = uniqueSku('IDEM');

  beforeAll(async () => {
    await priceSku(sku);
    await priceSku(sku, 50_000, GLOBEX);
    await stockSku(sku, 1_000);
    await stockSku(sku, 1_000, GLOBEX);
  });

  const ordersOf = async (customerId: string): Promise<number> =>
    Number((await db.query(`SELECT count(*) AS n FROM orders WHERE customer_id = $1`, [customerId]))[0].n);

  it('given 20 concurrent identical requests with one key, creates one order; the others are replayed or 409', async () => {
    const key = randomUUID();
    const body = checkoutBody(sku);
    const answers = await Promise.all(Array.from({ length: 20 }, () => checkout(body, key)));
    const accepted = answers.filter((a) => a.status === 202);
    const inUse = answers.filter((a) => a.status === 409);
    assert.equal(accepted.length + inUse.length, 20, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
    assert.ok(accepted.length >= 1);
    assert.ok(inUse.every((a) => a.json.error === 'IDEMPOTENCY_KEY_IN_USE'));
    assert.equal(new Set(accepted.map((a) => a.text)).size, 1, 'every 202 carries the same bytes');
    assert.equal(
      accepted.filter((a) => a.headers.get('idempotent-replayed') !== 'true').length,
      1,
      'exactly one original answer',
    );
    assert.equal(await ordersOf(body.customerId), 1);

    const again = await checkout(body, key);
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, accepted[0].text, 'byte-for-byte replay');
    assert.equal(await ordersOf(body.customerId), 1);
  });

  it('given the same key with a different body, answers 422 IDEMPOTENCY_KEY_REUSED and creates nothing', async () => {
    const key = randomUUID();
    const body = checkoutBody(sku);
    assert.equal((await checkout(body, key)).status, 202);
    const other = { ...body, lines: [{ sku, quantity: 2, unitPrice: 50_000 }] };
    const reused = await checkout(other, key);
    assert.equal(reused.status, 422);
    assert.equal(reused.json.error, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await ordersOf(body.customerId), 1);
  });

  it('keeps keys per tenant: the same key at two tenants makes two orders', async () => {
    const key = randomUUID();
    const body = checkoutBody(sku);
    const a = await checkout(body, key, ACME);
    const b = await checkout(body, key, GLOBEX);
    assert.equal(a.status, 202);
    assert.equal(b.status, 202);
    assert.equal(b.headers.get('idempotent-replayed'), null);
    assert.notEqual(a.json.orderId, b.json.orderId);
    assert.equal(await ordersOf(body.customerId), 2);
  });

  it('given a request that crashed while processing, lets the key be taken over once its lease expired', async () => {
    const key = randomUUID();
    await db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, state, lease_token, lease_expires_at, expires_at)
       VALUES ('acme', $1, 'crashed', 'processing', $2, now() - interval '1 second', now() + interval '1 day')`,
      [key, randomUUID()],
    );
    const body = checkoutBody(sku);
    const r = await checkout(body, key);
    assert.equal(r.status, 202, r.text);
    assert.equal(await ordersOf(body.customerId), 1);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while a live lease holds the key', async () => {
    const key = randomUUID();
    const body = checkoutBody(sku);
    await db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, state, lease_token, lease_expires_at, expires_at)
       VALUES ('acme', $1, $2, 'processing', $3, now() + interval '1 minute', now() + interval '1 day')`,
      [key, requestHash(body), randomUUID()],
    );
    const r = await checkout(body, key);
    assert.equal(r.status, 409);
    assert.equal(r.json.error, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(await ordersOf(body.customerId), 0);
  });

  it('deletes keys past their TTL with the cleanup job, after which the key is new again', async () => {
    const key = randomUUID();
    const body = checkoutBody(sku);
    assert.equal((await checkout(body, key)).status, 202);
    await db.query(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE tenant_id = 'acme' AND key = $1`,
      [key],
    );
    assert.ok((await deleteExpiredIdempotencyKeys(db)) >= 1);
    assert.equal(
      (await db.query(`SELECT 1 FROM idempotency_keys WHERE tenant_id = 'acme' AND key = $1`, [key])).length,
      0,
    );
    const fresh = await checkout(body, key);
    assert.equal(fresh.status, 202);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
  });
});
