import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { TenantRegistry } from '@checkout/service-kit';
import { loadStackConfig, scratchDatabase } from '@checkout/testing';
import { CatalogMetrics } from '../src/catalog/catalog.metrics';
import { RearmFlashSaleGatesJob } from '../src/catalog/jobs/rearm-flash-sale-gates.job';
import { MarkAnsweredCheckoutsHandler } from '../src/catalog/commands/mark-answered-checkouts/mark-answered-checkouts.handler';
import { CatalogRepository } from '../src/catalog/database/catalog.repository';
import { gateHoldId } from '../src/checkout/domain/request-hash';
import { OrderConfig } from '../src/config/order.config';
import { GateMetrics } from '../src/gate/gate.metrics';
import { OrderStockGate } from '../src/gate/stock-gate.provider';
import { MIGRATIONS } from '../src/migrations';

const stack = loadStackConfig();
const quiet = {
  setContext: () => undefined,
  info: () => undefined,
  warn: () => undefined,
} as unknown as PinoLogger;

describe('answered checkouts marked at the gate from the database (scratch order database, the real Redis)', () => {
  const tenantId = `marks-${randomBytes(3).toString('hex')}`;
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: DataSource;
  let provider: OrderStockGate;
  let marks: MarkAnsweredCheckoutsHandler;
  let config: OrderConfig;
  let registry: Registry;
  const redis = new Redis(stack.redis.url, { password: stack.auth?.redisPassword });

  beforeAll(async () => {
    scratch = await scratchDatabase('order_marks', MIGRATIONS, 3);
    db = scratch.dataSource;
    registry = new Registry();
    config = {
      REDIS_URL: stack.redis.url,
      REDIS_PASSWORD: stack.auth?.redisPassword,
      GATE_REPLY_TIMEOUT_MS: 5_000,
      IDEMPOTENCY_KEY_TTL_HOURS: 24,
      IDEMPOTENCY_LEASE_MS: 30_000,
      ORDER_GATE_REARM_INTERVAL_MS: 15_000,
    } as OrderConfig;
    provider = new OrderStockGate(config, new GateMetrics(registry), quiet);
    marks = new MarkAnsweredCheckoutsHandler(db, new CatalogRepository(), provider, quiet);
    assert.ok(await provider.gate.ready(5_000));
  });
  afterAll(async () => {
    await provider.onApplicationShutdown();
    redis.disconnect();
    await scratch.drop();
  });

  /** A completed key, as PlaceOrder leaves it, completed `agoMs` before now. */
  const completedKey = async (agoMs: number): Promise<string> => {
    const key = randomUUID();
    await db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, state, order_id, response_status, response_body,
                                     completed_at, expires_at)
       VALUES ($1, $2, 'h', 'completed', $3, 202, '{}', now() - $4 * interval '1 millisecond', now() + interval '1 day')`,
      [tenantId, key, randomUUID(), agoMs],
    );
    return key;
  };
  /** A completed key whose order has one line of `sku`. */
  const withSku = async (sku: string): Promise<string> => {
    const key = await completedKey(0);
    const [{ order_id: orderId }] = await db.query(
      `SELECT order_id FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
      [tenantId, key],
    );
    await db.query(
      `INSERT INTO orders (id, tenant_id, customer_id, currency, subtotal, discount, total, payment_token,
                           status, idempotency_key)
       VALUES ($1, $2, 'c', 'VND', 1, 0, 1, 'tok', 'PENDING', $3)`,
      [orderId, tenantId, key],
    );
    await db.query(
      `INSERT INTO order_lines (order_id, line_no, tenant_id, sku, quantity, unit_price, discount, line_total)
       VALUES ($1, 1, $2, $3, 1, 1, 0, 1)`,
      [orderId, tenantId, sku],
    );
    return key;
  };
  const marked = async (key: string) =>
    (await redis.zscore(`stock-gate:{${tenantId}}:answered`, gateHoldId(key))) !== null;
  const unavailable = async () =>
    (await registry.getSingleMetric('order_stock_gate_unavailable_total')!.get()).values.find(
      (v) => v.labels.operation === 'mark-answered',
    )?.value ?? 0;

  it('marks the checkouts answered since the first failed mark once Redis answers, then forgets them', async () => {
    assert.equal(await marks.markUnmarked([tenantId]), true, 'nothing to mark');
    const older = await completedKey(3_600_000);
    const missed = await completedKey(0);
    const gate = provider.gate;
    const real = gate.markAnswered.bind(gate);
    gate.markAnswered = async () => ({ outcome: 'GateUnavailable', reason: 'connection is reconnecting' });
    try {
      await provider.markAnswered(tenantId, missed);
    } finally {
      gate.markAnswered = real;
    }
    assert.equal(await unavailable(), 1, 'the failed mark is counted');
    assert.equal(await marked(missed), false);

    assert.equal(await marks.markUnmarked([tenantId]), true);
    assert.equal(await marked(missed), true, 'the checkout answered while Redis was away');
    assert.equal(await marked(older), false, 'answered long before the failure: marked then');

    await redis.del(`stock-gate:{${tenantId}}:answered`);
    assert.equal(await marks.markUnmarked([tenantId]), true);
    assert.equal(await marked(missed), false, 'nothing left to mark: the failure is forgotten');
  });

  it("marks a SKU's answered checkouts, page after page, and no other's nor those without an answer", async () => {
    const hot = await Promise.all(Array.from({ length: 1_205 }, () => withSku('HOT')));
    const other = await withSku('OTHER');
    // Lines of the SKU whose key holds no answer to replay, spread over the pages by their random order ids.
    const noAnswer = async (change: string) => {
      const key = await withSku('HOT');
      await db.query(`UPDATE idempotency_keys SET ${change} WHERE tenant_id = $1 AND key = $2`, [
        tenantId,
        key,
      ]);
      return key;
    };
    const without = await Promise.all(
      Array.from({ length: 30 }, () => [
        noAnswer(`expires_at = now() - interval '1 second'`),
        noAnswer(`state = 'processing'`),
        noAnswer(`order_id = gen_random_uuid()`), // the key expired and was used again for another checkout
      ]).flat(),
    );
    assert.equal(await marks.execute(tenantId, { sku: 'HOT' }), 1_205);
    assert.ok((await Promise.all(hot.map(marked))).every(Boolean), 'every one of the SKU');
    assert.equal(await marked(other), false);
    assert.deepEqual((await Promise.all(without.map(marked))).filter(Boolean), [], 'none without an answer');
  });

  it('marks the answers of a SKU whose gate was turned on lately on each re-arm pass, then no longer', async () => {
    const job = new RearmFlashSaleGatesJob(
      db,
      new CatalogRepository(),
      provider,
      marks,
      new TenantRegistry([
        { id: tenantId, apiKeySha256: createHash('sha256').update(tenantId).digest('hex') },
      ]),
      config,
      new CatalogMetrics(registry),
      quiet,
    );
    const sku = `LATE-${randomBytes(3).toString('hex')}`;
    // Answered as not gated just before the gate went on, after SetFlashSale marked the SKU's answers.
    const key = await withSku(sku);
    await new CatalogRepository().putFlashSale(db, tenantId, sku, true, 'override', 0);
    assert.deepEqual(await provider.gate.enable(tenantId, sku, 0), { outcome: 'Enabled' });
    try {
      assert.equal(await marked(key), false);
      const report = await job.runOnce();
      assert.deepEqual(report.rearmed, [], 'the counter is there: nothing re-armed');
      assert.equal(await marked(key), true, 'marked by the pass: the gate is a few seconds old');

      // Once the gate is older than a lease and two intervals, a pass leaves its answers alone.
      await redis.del(`stock-gate:{${tenantId}}:answered`);
      await db.query(
        `UPDATE flash_sales SET updated_at = now() - interval '61 seconds' WHERE tenant_id = $1`,
        [tenantId],
      );
      await job.runOnce();
      assert.equal(await marked(key), false);
    } finally {
      await provider.gate.disable(tenantId, sku);
    }
  });
});
