import { join } from 'node:path';
import { CheckoutApi } from '@checkout/e2e';
import {
  REPO_ROOT,
  serviceEnv,
  serviceReady,
  startDetached,
  startServices,
  stopServiceProcess,
  waitHealthy,
} from '@checkout/local-stack';
import { TopicReader } from '@checkout/testing';
import { FaultMode, FaultProxy } from '../fault-proxy';
import {
  ScenarioResult,
  ScenarioStack,
  conservation,
  freshSkus,
  lostEvents,
  placeCheckouts,
  refusals,
  resultRow,
  waitTerminal,
} from '../harness';

/** The service put behind the proxy: its HTTP checkouts, consumers and outbox all use the faulty link. */
const SERVICE = 'order';

/** One step of the fault schedule: what the link does and for how long. */
export interface FaultStep {
  mode: FaultMode;
  forMs: number;
}

/** Settings of a run; the defaults are the chaos run's, the CI spec passes smaller ones. */
export interface NetworkFaultOptions {
  checkouts?: number;
  perSecond?: number;
  schedule?: FaultStep[];
  /** How long every saga has to end once the link is healthy again. */
  recoverWithinMs?: number;
}

const DEFAULT_SCHEDULE: FaultStep[] = [
  { mode: { kind: 'latency', latencyMs: 50, jitterMs: 100 }, forMs: 5_000 },
  { mode: { kind: 'stall' }, forMs: 3_000 },
  { mode: { kind: 'reset' }, forMs: 500 },
  { mode: { kind: 'blackhole' }, forMs: 8_000 },
];

/**
 * Issue 18, scenario 4: the order service talks to PostgreSQL through a TCP fault proxy on loopback (added
 * latency, a stall, resets, black-holing) while checkouts with a mix of tokens run; then every saga must end,
 * stock be conserved, nothing charged twice and no event lost. The stack's own order service is replaced for
 * the run by one whose DATABASE_URL points at the proxy, and restored afterwards.
 */
export async function run(stack: ScenarioStack, options: NetworkFaultOptions = {}): Promise<ScenarioResult> {
  const { config } = stack;
  const { checkouts = 300, perSecond = 5, schedule = DEFAULT_SCHEDULE, recoverWithinMs = 180_000 } = options;
  const api = new CheckoutApi('acme');
  const proxy = new FaultProxy({ host: '127.0.0.1', port: config.pg.port });
  const proxyPort = await proxy.listen();
  const reader = await new TopicReader(['order.created', 'order.paid']).start();
  const log = (line: string) => console.log(`[network-faults] ${line}`);
  try {
    await stopServiceProcess(config, SERVICE);
    const env = serviceEnv(config, SERVICE);
    env.DATABASE_URL = env.DATABASE_URL.replace(`127.0.0.1:${config.pg.port}/`, `127.0.0.1:${proxyPort}/`);
    if (!env.DATABASE_URL.includes(`:${proxyPort}/`))
      throw new Error(`cannot route ${SERVICE}'s DATABASE_URL through the proxy`);
    const pid = startDetached(config.run, config.logs, {
      name: SERVICE,
      command: process.execPath,
      args: ['--enable-source-maps', join(REPO_ROOT, 'apps', SERVICE, 'dist', 'src', 'main.js')],
      ports: [config.servicePorts[SERVICE], config.internalPorts[SERVICE]],
      env: { ...process.env, ...env },
    });
    await waitHealthy(`${SERVICE} behind the fault proxy`, pid, () => serviceReady(config, SERVICE), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    log(`${SERVICE} (pid ${pid}) reaches PostgreSQL through 127.0.0.1:${proxyPort}`);

    const mix = {
      skus: await freshSkus(api, 'NETFAULT', 4, Math.ceil(checkouts / 3)),
      tokens: ['tok_success', 'tok_success', 'tok_decline', 'tok_3ds', 'tok_timeout_success'],
    };
    const placing = placeCheckouts(api, mix, checkouts, { perSecond, retryForMs: recoverWithinMs });
    for (const step of schedule) {
      log(`fault ${step.mode.kind} for ${step.forMs} ms`);
      proxy.fault(step.mode, step.forMs);
      await new Promise((resolve) => setTimeout(resolve, step.forMs));
    }
    proxy.heal();
    const faultEndedAt = Date.now();
    const { orderIds, refused, unresolved, retries } = await placing;
    log(
      `${orderIds.length} accepted, ${refusals(refused)} refused, ${retries} retries; waiting for every saga to end`,
    );
    const lastTerminalAt = await waitTerminal(api, orderIds, recoverWithinMs);
    const verdict = await conservation(api, mix, orderIds);
    const lost = await lostEvents(reader, api, orderIds);
    return resultRow(
      'network-faults (order <-> PostgreSQL)',
      verdict,
      { orders: orderIds.length, lostEvents: lost, faultEndedAt, lastTerminalAt },
      {
        refused: refusals(refused),
        unresolved,
        retries,
        connections: proxy.stats.accepted,
        resets: proxy.stats.reset,
        swallowedBytes: proxy.stats.swallowed,
      },
      unresolved > 0 ? [`${unresolved} checkouts never got an answer the client could act on`] : [],
    );
  } finally {
    await reader.stop();
    await stopServiceProcess(config, SERVICE).catch(() => undefined);
    await proxy.close();
    await startServices(config, log, [SERVICE]);
  }
}
