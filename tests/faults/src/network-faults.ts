import { join } from 'node:path';
import {
  REPO_ROOT,
  StackConfig,
  serviceEnv,
  serviceReady,
  startDetached,
  stopServiceProcess,
  waitHealthy,
} from '@checkout/local-stack';
import { FaultMode, FaultProxy, ProxyStats } from './fault-proxy';

/** One step of a fault schedule: what the link does and for how long. */
export interface FaultStep {
  mode: FaultMode;
  forMs: number;
}

/** Issue 18 scenario 4's schedule: added latency, a stall, resets, then a black hole. */
export const DEFAULT_SCHEDULE: readonly FaultStep[] = [
  { mode: { kind: 'latency', latencyMs: 50, jitterMs: 100 }, forMs: 5_000 },
  { mode: { kind: 'stall' }, forMs: 3_000 },
  { mode: { kind: 'reset' }, forMs: 500 },
  { mode: { kind: 'blackhole' }, forMs: 8_000 },
];

/** A shorter schedule for CI: every kind of fault, each for a moment. */
export const SHORT_SCHEDULE: readonly FaultStep[] = [
  { mode: { kind: 'latency', latencyMs: 30, jitterMs: 60 }, forMs: 2_000 },
  { mode: { kind: 'stall' }, forMs: 1_500 },
  { mode: { kind: 'reset' }, forMs: 300 },
  { mode: { kind: 'blackhole' }, forMs: 3_000 },
];

/** The link of a service a fault proxy can sit on. */
export type Link = 'postgres' | 'kafka';

/** A service of the local stack whose PostgreSQL or Kafka connections go through a fault proxy on loopback. */
export interface ServiceBehindProxy {
  service: string;
  link: Link;
  proxy: FaultProxy;
  pid: number;
  /** Plays a schedule of faults on the link, one step after the other, then heals it. */
  play(schedule: readonly FaultStep[], log?: (line: string) => void): Promise<void>;
  /** Stops the proxied service and closes the proxy (starting the stack's own service again is the caller's). */
  close(): Promise<void>;
  readonly stats: ProxyStats;
}

/**
 * Replaces a running service of the stack by one whose connections of `link` go through a fresh `FaultProxy`:
 * for PostgreSQL its DATABASE_URL points at the proxy (its HTTP handlers, consumers and outbox all use the faulty
 * link); for Kafka its only bootstrap broker is the proxy on the broker's link listener's advertised port, so the
 * metadata keeps every connection (fetches, heartbeats, commits, the DLQ producer) on the proxy. Returns once the
 * service is ready.
 */
export async function serviceBehindProxy(
  config: StackConfig,
  service: string,
  link: Link = 'postgres',
): Promise<ServiceBehindProxy> {
  const target = link === 'postgres' ? config.pg.port : config.kafka.link.port;
  const proxy = new FaultProxy({ host: '127.0.0.1', port: target });
  const proxyPort = await proxy.listen(link === 'kafka' ? config.kafka.link.proxyPort : 0);
  try {
    const env = serviceEnv(config, service);
    if (link === 'postgres') {
      const url = new URL(env.DATABASE_URL ?? 'postgres://missing');
      if (url.hostname !== '127.0.0.1' || url.port !== String(config.pg.port))
        throw new Error(`cannot route ${service}'s DATABASE_URL through the proxy`);
      url.port = String(proxyPort);
      url.searchParams.delete('host'); // the stack's Unix socket would bypass the proxy
      env.DATABASE_URL = url.toString();
    } else {
      env.KAFKA_BROKERS = `127.0.0.1:${proxyPort}`;
    }
    await stopServiceProcess(config, service);
    const pid = startDetached(config.run, config.logs, {
      name: service,
      command: process.execPath,
      args: ['--enable-source-maps', join(REPO_ROOT, 'apps', service, 'dist', 'src', 'main.js')],
      ports: [config.servicePorts[service], config.internalPorts[service]],
      env: { ...process.env, ...env },
    });
    // A Nest boot on a loaded 2-core machine took minutes (see the chaos runner's restart): a generous deadline.
    await waitHealthy(`${service} behind the fault proxy`, pid, () => serviceReady(config, service), {
      timeoutMs: 240_000,
      intervalMs: 250,
    });
    const name = link === 'postgres' ? 'PostgreSQL' : 'Kafka';
    return {
      service,
      link,
      proxy,
      pid,
      stats: proxy.stats,
      async play(schedule, log = () => undefined) {
        for (const step of schedule) {
          log(`${service} <-> ${name}: ${step.mode.kind} for ${step.forMs} ms`);
          proxy.fault(step.mode);
          // The fault window itself: a length of time, not a wait for a condition.
          await new Promise((resolve) => setTimeout(resolve, step.forMs));
        }
        proxy.heal();
      },
      async close() {
        await stopServiceProcess(config, service).catch(() => undefined);
        await proxy.close();
      },
    };
  } catch (error) {
    await stopServiceProcess(config, service).catch(() => undefined);
    await proxy.close();
    throw error;
  }
}
