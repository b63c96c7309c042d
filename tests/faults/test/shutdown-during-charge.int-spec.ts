import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { REPO_ROOT, StackConfig, serviceEnv, superClient } from '@checkout/local-stack';
import { DEV_PSP_CREDENTIALS } from '@checkout/service-kit';
import {
  ServiceProcess,
  freePort,
  loadStackConfig,
  startServiceProcess,
  superuserDataSource,
  waitFor,
} from '@checkout/testing';
import { FaultProxy } from '../src/fault-proxy';

/** An empty database of the stack's PostgreSQL, migrated by the payment image's own migrate entry point. */
async function migratedPaymentDatabase(config: StackConfig, env: Record<string, string>): Promise<void> {
  const migrate = spawnSync(process.execPath, [join(REPO_ROOT, 'apps/payment/dist/src/migrate.js')], {
    env: { ...process.env, ...serviceEnv(config, 'payment'), ...env },
    encoding: 'utf8',
  });
  assert.equal(migrate.status, 0, `${migrate.stdout}\n${migrate.stderr}`);
}

/**
 * SIGTERM while a charge waits on the PSP: the process stops claiming, waits for the answer, records it, and only
 * then closes its database and exits 0. A second payment process of its own (scratch database, no Kafka) talks to
 * the stack's PSP simulator through a fault proxy that holds the charge's bytes until the test lets them go.
 */
describe('payment: SIGTERM with a PSP charge in flight', () => {
  const config = loadStackConfig();
  const name = `payment_sigterm_${randomBytes(4).toString('hex')}`;
  let proxy: FaultProxy;
  let app: ServiceProcess;
  let db: DataSource;

  beforeAll(async () => {
    proxy = new FaultProxy({ host: '127.0.0.1', port: config.servicePorts['psp-simulator'] });
    const pspPort = await proxy.listen();
    const admin = superClient(config);
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const env = {
      DATABASE_URL: `postgres://${config.pg.superuser}:${encodeURIComponent(config.pg.password)}@127.0.0.1:${config.pg.port}/${name}`,
      KAFKA_BROKERS: `127.0.0.1:${await freePort()}`,
      PSP_URL: `http://127.0.0.1:${pspPort}`,
      // One call, long enough that only the proxy decides when the answer comes.
      PAYMENT_PSP_TIMEOUT_MS: '30000',
      PAYMENT_PSP_RETRIES: '0',
      PAYMENT_RECONCILE_INTERVAL_MS: '600000',
      PAYMENT_ORPHAN_SWEEP_INTERVAL_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '20000',
    };
    await migratedPaymentDatabase(config, env);
    db = await superuserDataSource(name, [], 2);
    app = await startServiceProcess(config, 'payment', env);
    await app.ready();
  });

  afterAll(async () => {
    await app?.stop('SIGKILL');
    await proxy?.close();
    await db?.destroy();
    const admin = superClient(config);
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  const attempt = async (id: string) =>
    (await db.query(`SELECT state, psp_ref, failure_reason FROM payment_attempt WHERE id = $1`, [id]))[0] as {
      state: string;
      psp_ref: string | null;
      failure_reason: string | null;
    };

  it('waits for the PSP answer, records it, then exits 0', async () => {
    proxy.fault({ kind: 'stall' });
    const sent = proxy.stats.bytesUp;
    // What the inventory.reserved consumer writes (this process has no Kafka): a new attempt the worker claims.
    const id = randomUUID();
    const orderId = randomUUID();
    await db.query(
      `INSERT INTO payment_attempt (id, tenant_id, order_id, amount, currency, payment_token, psp_account,
                                    idempotency_key, cause)
       VALUES ($1, 'acme', $2, 50000, 'VND', 'tok_decline', $3, $4, $5)`,
      [
        id,
        orderId,
        DEV_PSP_CREDENTIALS[0].accountId,
        `pay_${id}`,
        JSON.stringify({ eventId: randomUUID(), correlationId: orderId, traceparent: null }),
      ],
    );
    await waitFor(
      'the charge request held by the proxy',
      async () => (await attempt(id)).state === 'pending' && proxy.stats.bytesUp > sent,
      { timeoutMs: 30_000, intervalMs: 50 },
    );

    const exit = app.stop('SIGTERM');
    await app.waitForOutput(/waiting for the charges in flight/, 20_000);
    assert.equal(app.child.exitCode, null, 'still running while its charge waits');
    assert.equal((await attempt(id)).state, 'pending');

    proxy.heal();
    assert.equal(await exit, 0, app.output().slice(-3000));
    const recorded = await attempt(id);
    assert.equal(recorded.state, 'failed', 'the answer was recorded before the database closed');
    assert.equal(recorded.failure_reason, 'card_declined');
    const history: { to_state: string }[] = await db.query(
      `SELECT to_state FROM payment_transition WHERE payment_id = $1 ORDER BY id`,
      [id],
    );
    assert.deepEqual(
      history.map((h) => h.to_state),
      ['pending', 'failed'],
    );
  });
});
