import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  ServiceProcess,
  freePort,
  loadStackConfig,
  serviceDataSource,
  startServiceProcess,
  waitFor,
} from '@checkout/testing';
import { ACME, call, checkoutBody, priceSku, stockSku, uniqueSku } from './order-api';

/** What Kubernetes gives the readiness probe (tools/k8s: timeoutSeconds 3). */
const PROBE_TIMEOUT_MS = 3_000;

describe('order with its Kafka unreachable (a second order process whose only broker is a dead port)', () => {
  let app: ServiceProcess;
  let db: DataSource;
  const sku = uniqueSku('NOKAFKA');

  beforeAll(async () => {
    db = await serviceDataSource('order_svc', 2);
    await priceSku(sku);
    await stockSku(sku, 10);
    app = await startServiceProcess(loadStackConfig(), 'order', {
      KAFKA_BROKERS: `127.0.0.1:${await freePort()}`,
    });
  });
  afterAll(async () => {
    await app?.stop('SIGKILL');
    await db?.destroy();
  });

  it('is ready within the probe timeout, reports Kafka unreachable and its consumer retrying', async () => {
    await app.ready();
    // Every probe answers within Kubernetes' timeout, while the consumer keeps failing to join in the background.
    for (let i = 0; i < 3; i += 1) {
      const started = Date.now();
      const res = await fetch(`${app.internalUrl}/health/ready`, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      const report = (await res.json()) as { details: { kafka: { reachable: boolean; consumers: object } } };
      assert.equal(res.status, 200, JSON.stringify(report));
      assert.equal(report.details.kafka.reachable, false);
      assert.ok(Date.now() - started < PROBE_TIMEOUT_MS);
    }
    await app.waitForOutput(/consumer could not start: retrying in the background/);
    const report = await (await fetch(`${app.internalUrl}/health/ready`)).json();
    assert.ok(
      Object.values(
        (report as { details: { kafka: { consumers: Record<string, string> } } }).details.kafka.consumers,
      ).every((s) => s === 'retrying' || s === 'starting'),
      JSON.stringify(report),
    );
  });

  it('accepts a checkout; the outbox row it wrote reaches the saga through Debezium', async () => {
    const body = checkoutBody(sku);
    const accepted = await call('POST', '/v1/checkout', {
      key: ACME,
      body,
      headers: { 'idempotency-key': randomUUID() },
      base: app.url,
    });
    assert.equal(accepted.status, 202, accepted.text);
    const orderId = String(accepted.json.orderId);
    const [outbox] = await db.query(
      `SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = $1 AND type = 'order.created'`,
      [orderId],
    );
    assert.equal(outbox.n, 1);
    // The stack's own services (their Kafka is up) carry the saga to the end.
    const shipped = await waitFor(
      `order ${orderId} SHIPPED`,
      async () => {
        const r = await call('GET', `/v1/orders/${orderId}`);
        return r.json.status === 'SHIPPED' ? r : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.equal(shipped.json.paymentState, 'succeeded');
  });

  it('stops at SIGTERM with exit code 0 although its consumer never joined', async () => {
    const code = await Promise.race([
      app.stop('SIGTERM'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000).unref()),
    ]);
    assert.equal(code, 0, app.output().slice(-2000));
  });
});
