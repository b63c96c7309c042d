import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { StockGate } from '@checkout/stock-gate';
import { loadStackConfig } from '@checkout/testing';
import { InventoryConfig } from '../src/config/inventory.config';
import { GateResyncJob } from '../src/reservation/jobs/gate-resync.job';
import { ReservationMetrics } from '../src/reservation/reservation.metrics';
import { TEST_TENANT, expire, givenStock, inTx, order, uniqueSku } from './support';
import { inventorySpec, testTenants } from './inventory-spec';

/** A logger that keeps what the job says. */
function recordingLogger() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj, msg });
  const logger = { setContext: () => undefined, info: at('info'), warn: at('warn'), error: at('error') };
  return { logger: logger as unknown as PinoLogger, lines };
}

describe('GateResyncJob: the gate counters of gated SKUs are reset from the inventory database', () => {
  const spec = inventorySpec(3);
  const { reserve } = spec;
  const redisUrl = loadStackConfig().redis.url;
  const job = (config: Partial<InventoryConfig>, registry = new Registry()) => {
    const log = recordingLogger();
    const metrics = new ReservationMetrics(registry, spec.ds, testTenants);
    const j = new GateResyncJob(
      { INVENTORY_GATE_RESYNC_INTERVAL_MS: 0, ...config } as InventoryConfig,
      spec.ds,
      testTenants,
      metrics,
      log.logger,
    );
    return { job: j, lines: log.lines, registry };
  };
  let gate: StockGate;

  beforeAll(async () => {
    gate = StockGate.connect(redisUrl, { commandTimeout: 15_000 });
    assert.equal(await gate.ready(5_000), true);
  });
  afterAll(async () => {
    await gate.close();
  });

  it('sets the counter to what the database can still sell (holds past their TTL included) and says so', async () => {
    const sku = uniqueSku('gated');
    const plain = uniqueSku('not-gated');
    await givenStock(spec.ds, sku, 40);
    await givenStock(spec.ds, plain, 5);
    const held = order([[sku, 10]]);
    const lapsed = order([[sku, 4]]);
    for (const o of [held, lapsed])
      await inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId: TEST_TENANT, order: o }));
    await expire(spec.ds, lapsed.orderId);
    await gate.enable(TEST_TENANT, sku, 100); // drifted: e.g. tokens never given back
    const { job: j, lines, registry } = job({ REDIS_URL: redisUrl });

    const run = await j.runOnce();

    assert.equal(run.outcome, 'Resynced');
    assert.deepEqual(run.outcome === 'Resynced' ? run.corrections.filter((c) => c.sku === sku) : [], [
      { tenantId: TEST_TENANT, sku, before: 100, after: 30 },
    ]);
    assert.equal(await gate.remaining(TEST_TENANT, sku), 30);
    assert.equal(await gate.remaining(TEST_TENANT, plain), null, 'a SKU without a gate stays without one');
    assert.ok(
      lines.some(
        (l) =>
          l.msg === 'stock gate counter reset from the database' && (l.obj as { sku?: string }).sku === sku,
      ),
    );
    const metric = await registry.getSingleMetric('inventory_gate_resync_corrections_total')!.get();
    assert.ok(metric.values.some((v) => v.labels.tenant === TEST_TENANT && v.value >= 1));
    await j.beforeApplicationShutdown();
    await gate.disable(TEST_TENANT, sku);
  });

  it('Redis down: the run is logged and skipped, nothing throws', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((r) => closed.close(() => r()));
    const { job: j, lines } = job({ REDIS_URL: `redis://127.0.0.1:${port}` });

    const run = await j.runOnce();

    assert.equal(run.outcome, 'Skipped');
    assert.ok(lines.some((l) => l.level === 'warn' && l.msg === 'stock gate unavailable: re-sync skipped'));
    await j.beforeApplicationShutdown();
  });
});
