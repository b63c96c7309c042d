import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, StackConfig } from './config';
import { databaseUrl } from './postgres';
import { PartFailed, partState } from './parts';
import { startDetached, stopManaged, waitHealthy } from './processes';
import { clientAuthEnv } from './sasl';
import { SERVICES } from './topology';
import { waitFor } from './wait';

/** The environment a service runs with in the local stack: the same names Kubernetes and compose set. */
export function serviceEnv(config: StackConfig, name: string): Record<string, string> {
  const spec = SERVICES.find((s) => s.name === name);
  if (!spec) throw new Error(`unknown service ${name}`);
  const env: Record<string, string> = {
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    SERVICE_NAME: name,
    PORT: String(config.servicePorts[name]),
    INTERNAL_PORT: String(config.internalPorts[name]),
    KAFKA_BROKERS: config.kafka.bootstrap,
    REDIS_URL: config.redis.url,
    PSP_URL: `http://127.0.0.1:${config.servicePorts['psp-simulator']}`,
    ORDER_URL: `http://127.0.0.1:${config.servicePorts.order}`,
    INVENTORY_URL: `http://127.0.0.1:${config.servicePorts.inventory}`,
    PAYMENT_URL: `http://127.0.0.1:${config.servicePorts.payment}`,
    FULFILLMENT_URL: `http://127.0.0.1:${config.servicePorts.fulfillment}`,
    SAGA_TRACKER_URL: `http://127.0.0.1:${config.servicePorts['saga-tracker']}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    DEV_SEED: 'true',
    OTEL_TRACES_EXPORTER: process.env.OTEL_TRACES_EXPORTER ?? 'file',
    TRACE_FILE: join(config.logs, 'traces.jsonl'),
    // PSP simulator timings, short so that the integration specs run fast (tok_timeout_*, tok_3ds, late webhooks).
    PSP_SIM_WEBHOOK_DELAY_MS: '150',
    // The simulator's journal: stopping and starting it (an outage in the specs) keeps its charges and keys.
    PSP_SIM_STATE_FILE: join(config.dir, 'psp', 'state.jsonl'),
    PSP_SIM_HANG_MS: '3000',
    PSP_SIM_TIMEOUT_WEBHOOK_DELAY_MS: '4000',
    PSP_SIM_3DS_DELAY_MS: '1500',
    PSP_SIM_LATE_WEBHOOK_DELAY_MS: '8000',
    PSP_SIM_LOST_SETTLE_MS: '200',
    // Payment: a short PSP timeout, early reconciliation and fast refund retries for the local stack.
    PAYMENT_PSP_TIMEOUT_MS: '1000',
    PAYMENT_PSP_RETRIES: '1',
    // Well past one charge call's whole budget (2 attempts of 1 s): a pending attempt asked about while its call
    // still hangs settles by reconciliation and never shows the `unknown` the PSP-timeout specs look for.
    PAYMENT_RECONCILE_AFTER_MS: '6000',
    // Reconciliation and the orphan sweep sleep until their work falls due (the charge worker and the webhooks say
    // when), so they keep the product's longest sleeps (30 s, 5 min) here: at rest they cost nothing.
    PAYMENT_ORPHAN_MIN_AGE_MS: '4000',
    PAYMENT_ORPHAN_WINDOW_MS: '300000',
    PAYMENT_REFUND_BACKOFF_MS: '200',
    PAYMENT_REFUND_MAX_ATTEMPTS: '4',
    // Fulfillment: the simulated carrier refuses these SKUs / customers (shipment-failed paths), a fast notifier.
    CARRIER_FAIL_SKUS: 'UNSHIPPABLE-*',
    CARRIER_FAIL_CUSTOMERS: 'undeliverable-*',
    NOTIFIER_INTERVAL_MS: '1000',
    // Inventory: a TTL well above the payment time under load (a 6 s TTL let busy-machine orders expire
    // before they were paid, so flash-sale runs resold released units). The expiry job wakes when a held
    // reservation expires, so it keeps the product's longest sleep (5 s). The paid-after-expiry path is
    // exercised by the inventory command specs with their own expiry times, and end to end with a 1 s SKU TTL.
    INVENTORY_RESERVATION_TTL_SECONDS: '60',
    INVENTORY_DRIFT_INTERVAL_MS: '30000',
    // Off here: the specs drive the gate's counters exactly (a token given back is the next buyer's) and a
    // re-sync in the middle would make them race it. Its own specs run it directly; elsewhere it runs every 30 s.
    INVENTORY_GATE_RESYNC_INTERVAL_MS: '0',
    // Saga tracker: a saga whose PSP never answers is stuck after 15 s (the specs wait for that); the other
    // steps get a minute, so that a flash sale on a busy 2-core machine does not flood the stuck list.
    SAGA_STUCK_AFTER_MS: '300000',
    SAGA_STEP_TIMEOUT_RESERVATION_MS: '60000',
    SAGA_STEP_TIMEOUT_PAYMENT_MS: '15000',
    SAGA_STEP_TIMEOUT_STOCK_COMMIT_MS: '60000',
    SAGA_STEP_TIMEOUT_ORDER_PAID_MS: '60000',
    SAGA_STEP_TIMEOUT_SHIPMENT_MS: '60000',
    SAGA_STEP_TIMEOUT_ORDER_CANCEL_MS: '60000',
    SAGA_STEP_TIMEOUT_REFUND_MS: '60000',
    SAGA_STEP_TIMEOUT_STOCK_RELEASE_MS: '60000',
    SAGA_STEP_TIMEOUT_SHIPMENT_CANCEL_MS: '60000',
    // A pass reads both watermarks of every tracked partition (two admin requests per topic): every 5 s is
    // plenty for step timeouts of 15 s and more.
    SAGA_STUCK_SWEEP_INTERVAL_MS: '5000',
  };
  if (spec.database) env.DATABASE_URL = databaseUrl(config, spec.database);
  return { ...env, ...clientAuthEnv(config.auth, config.tls) };
}

/** Whether a service answers its readiness probe (on its internal port). */
export async function serviceReady(config: StackConfig, name: string): Promise<boolean> {
  return readyOn(config.internalPorts[name]);
}

/** Whether the service process whose internal port this is answers /health/ready with 200. */
export async function readyOn(internalPort: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${internalPort}/health/ready`, {
    signal: AbortSignal.timeout(2000),
  });
  return res.status === 200;
}

/**
 * Starts every built service (or only the named ones) detached, reusing those of this checkout already running,
 * and waits until each one's /health/ready says ok. Returns the services it started.
 */
export async function startServices(
  config: StackConfig,
  log: (line: string) => void,
  only?: readonly string[],
): Promise<string[]> {
  const selected = SERVICES.filter((svc) => !only || only.includes(svc.name));
  const pids = new Map<string, number>();
  for (const svc of selected) {
    if ((await partState(config, svc.name)) === 'ours') continue;
    const main = join(REPO_ROOT, 'apps', svc.name, 'dist', 'src', 'main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
    const pid = startDetached(config.run, config.logs, {
      name: svc.name,
      command: process.execPath,
      args: ['--enable-source-maps', main],
      ports: [config.servicePorts[svc.name], config.internalPorts[svc.name]],
      env: { ...process.env, ...serviceEnv(config, svc.name) },
    });
    pids.set(svc.name, pid);
  }
  const results = await Promise.allSettled(
    selected.map(async (svc) => {
      const what = `${svc.name} /health/ready`;
      const probe = () => serviceReady(config, svc.name);
      const pid = pids.get(svc.name);
      const wait = { timeoutMs: 60_000, intervalMs: 250 };
      if (pid === undefined) await waitFor(what, probe, wait);
      else await waitHealthy(what, pid, probe, wait);
      log(`${svc.name} ready on :${config.servicePorts[svc.name]}`);
    }),
  );
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed >= 0)
    throw new PartFailed(selected[failed].name, (results[failed] as PromiseRejectedResult).reason);
  return [...pids.keys()];
}

/** Stops one service (SIGTERM: it drains its consumers and commits offsets) and waits for it to exit. */
export const stopServiceProcess = (config: StackConfig, name: string) =>
  stopManaged(config.run, name, 30_000);

/** Stops every service, in parallel. */
export async function stopServices(config: StackConfig): Promise<void> {
  await Promise.all(SERVICES.map((svc) => stopServiceProcess(config, svc.name)));
}
