import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import { REPO_ROOT, StackConfig, loadStackConfig } from './config';
import { registerConnectors, startConnect, stopConnect } from './connect';
import { Jars, fetchJars } from './jars';
import { ensureTopics, startKafka, stopKafka } from './kafka';
import { stackProcesses } from './ownership';
import { ALL_PARTS, INFRA_PARTS, PartFailed, PartName, checkParts } from './parts';
import {
  databaseUrl,
  grantOutboxToCdc,
  pgLogFile,
  provisionDatabases,
  startPostgres,
  stopPostgres,
} from './postgres';
import { checkPrerequisites } from './prerequisites';
import { killTransient, runAsync, terminate } from './processes';
import { startRedis, stopRedis } from './redis';
import { serviceEnv, startServices, stopServiceProcess } from './services';
import { DB_SERVICES, SERVICES } from './topology';
import { abortWaits, resumeWaits } from './wait';

const stackLog = (line: string) => console.log(`[stack] ${line}`);

/** An infrastructure part `up --only` can start alone. */
type InfraPart = (typeof INFRA_PARTS)[number];

/** What `up` should start: everything, the infrastructure only, or some infrastructure parts (the stack's specs). */
export interface UpOptions {
  services?: boolean;
  /** Only these infrastructure parts, no services. */
  only?: readonly InfraPart[];
  log?: (line: string) => void;
  /** On SIGINT/SIGTERM during `up`: stop what this `up` started, then re-raise the signal (default true). */
  handleSignals?: boolean;
}

/** Timings of one `up`, in ms, for the notes and the demo. */
export type UpTimings = Record<string, number>;

/** What one `up` did: its timings, the parts it started (and may stop), the parts of this checkout it reused. */
export interface UpResult {
  timings: UpTimings;
  started: PartName[];
  reused: PartName[];
}

/** An `up` that failed: what it started is stopped again; the message ends with the failed part's log tail. */
export class UpFailed extends Error {}

/** Runs each service's TypeORM migrations with its own role (services never `synchronize`). */
export async function migrateAll(config: StackConfig, only?: string): Promise<void> {
  for (const svc of DB_SERVICES.filter((s) => !only || s.name === only)) {
    const script = join(REPO_ROOT, 'apps', svc.name, 'dist', 'src', 'migrate.js');
    if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
    await runAsync(process.execPath, [script], { env: { ...process.env, ...serviceEnv(config, svc.name) } });
  }
}

/** The log file of a part. */
export function partLogFile(config: StackConfig, part: PartName): string {
  return part === 'postgres' ? pgLogFile(config) : join(config.logs, `${part}.log`);
}

/** The last lines of a part's log, for a failure message. */
export function logTail(config: StackConfig, part: PartName, lines = 25): string {
  const file = partLogFile(config, part);
  if (!existsSync(file)) return `(no log at ${file})`;
  const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  return `--- last lines of ${file} ---\n${tail || '(empty)'}`;
}

/** Stops one part of this checkout (never a process that is not this checkout's); whether it was running. */
export async function stopPart(config: StackConfig, part: PartName): Promise<boolean> {
  switch (part) {
    case 'postgres':
      return stopPostgres(config);
    case 'redis':
      return stopRedis(config);
    case 'kafka':
      return stopKafka(config);
    case 'connect':
      return stopConnect(config);
    default:
      return stopServiceProcess(config, part);
  }
}

/** Stops the given parts of this checkout, services first, PostgreSQL last. */
export async function stopParts(
  parts: readonly PartName[],
  log: (line: string) => void = stackLog,
): Promise<void> {
  const config = loadStackConfig();
  const order = [...ALL_PARTS].reverse().filter((p) => parts.includes(p));
  const services = order.filter((p) => !(INFRA_PARTS as readonly string[]).includes(p));
  await Promise.all(services.map(async (p) => (await stopPart(config, p)) && log(`${p} stopped`)));
  for (const part of order.filter((p) => !services.includes(p)))
    if (await stopPart(config, part)) log(`${part} stopped`);
}

/**
 * Starts the local stack, idempotently: PostgreSQL, Redis, Kafka, migrations, Kafka Connect with one Debezium
 * connector per service database, topics, then the services; returns when every part is healthy. Every port is
 * checked first: a port held by anything but this checkout's stack starts nothing (PortConflict). A part that
 * fails, or SIGINT/SIGTERM, stops every part this call started (UpFailed, with the failed part's log tail).
 */
export async function bringUp(options: UpOptions = {}): Promise<UpResult> {
  const log = options.log ?? stackLog;
  const config = loadStackConfig();
  checkPrerequisites();
  const parts: PartName[] = options.only
    ? INFRA_PARTS.filter((p) => options.only!.includes(p))
    : options.services === false
      ? [...INFRA_PARTS]
      : [...ALL_PARTS];
  const states = await checkParts(config, parts);
  const reused = parts.filter((p) => states.get(p) === 'ours');
  if (reused.length) log(`reusing this checkout's ${reused.join(', ')}`);
  const attempted = new Set<PartName>();
  const started: PartName[] = [];
  const timings: UpTimings = {};
  const begun = Date.now();
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    log(`${signal}: stopping what this up started`);
    abortWaits(`interrupted by ${signal}`);
    killTransient();
  };
  const handle = options.handleSignals !== false;
  if (handle) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  const want = (part: PartName) => parts.includes(part);
  /** Runs one part's start (skipped when not wanted), timed; a failure names the part. */
  const step = async (
    part: PartName,
    fn: () => Promise<boolean | string[]>,
    after?: () => Promise<unknown>,
  ) => {
    if (!want(part)) return;
    if (interrupted) throw new Error(`interrupted by ${interrupted}`);
    const t = Date.now();
    if (states.get(part) === 'free') attempted.add(part);
    try {
      const result = await fn();
      if (result === true) started.push(part);
      if (after) await after();
    } catch (error) {
      throw error instanceof PartFailed ? error : new PartFailed(part, error);
    }
    timings[part] = Date.now() - t;
    log(
      `${part} ${states.get(part) === 'free' ? 'started' : 'ready'} (${(timings[part] / 1000).toFixed(1)} s)`,
    );
  };
  const settle = async (steps: Promise<unknown>[]) => {
    const results = await Promise.allSettled(steps);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    let jars: Jars | undefined;
    if (want('kafka') || want('connect')) {
      const t = Date.now();
      jars = await fetchJars(config, log);
      timings.jars = Date.now() - t;
    }
    await settle([
      step(
        'postgres',
        () => startPostgres(config, log),
        async () => {
          await provisionDatabases(config);
          if (options.only) return;
          await migrateAll(config);
          await grantOutboxToCdc(config);
        },
      ),
      step('redis', () => startRedis(config)),
      step(
        'kafka',
        () => startKafka(config, jars!, log),
        () => ensureTopics(config, [...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic)]),
      ),
    ]);
    await step(
      'connect',
      () => startConnect(config, jars!),
      async () => {
        if (!options.only) await registerConnectors(config);
      },
    );
    const services = parts.filter((p) => !(INFRA_PARTS as readonly string[]).includes(p));
    if (services.length) {
      const t = Date.now();
      for (const svc of services) if (states.get(svc) === 'free') attempted.add(svc);
      started.push(...((await startServices(config, log, services)) as PartName[]));
      timings.services = Date.now() - t;
    }
  } catch (error) {
    resumeWaits();
    const failed = error instanceof PartFailed ? error.part : undefined;
    if (attempted.size) {
      log(`stopping what this up started: ${[...attempted].join(', ')}`);
      await stopParts([...attempted], log);
    }
    if (handle) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
    if (interrupted) {
      // Re-raised so that the process ends as the signal says (or its own handlers run), now that nothing is left.
      process.kill(process.pid, interrupted);
      throw new UpFailed(`up interrupted by ${interrupted}; stopped what it started`);
    }
    const tail = failed ? `\n${logTail(config, failed as PartName)}` : '';
    throw new UpFailed(`${(error as Error).message}${tail}`);
  }
  if (handle) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
  // PostgreSQL, Redis and Kafka start in parallel: the total is wall time, not the sum of the steps.
  timings.total = Date.now() - begun;
  return { timings, started, reused };
}

/** `bringUp`, returning only the timings (what the demo and `npm run up` print). */
export async function up(options: UpOptions = {}): Promise<UpTimings> {
  return (await bringUp(options)).timings;
}

function knownService(name: string): void {
  if (!SERVICES.some((s) => s.name === name))
    throw new Error(`unknown service ${name} (known: ${SERVICES.map((s) => s.name).join(', ')})`);
}

/** A service's database side, idempotently: its database and role, its migrations, the CDC grant on its outbox. */
async function prepareDatabase(config: StackConfig, name: string): Promise<void> {
  if (!DB_SERVICES.some((s) => s.name === name)) return;
  await provisionDatabases(config);
  await migrateAll(config, name);
  await grantOutboxToCdc(config);
}

/**
 * Stops one service of the running stack (SIGTERM: it drains its consumers and commits its offsets) and waits
 * for it to exit; the rest of the stack keeps running. Returns whether it was running. For specs that take a
 * dependency away (e.g. the PSP simulator during a refund) and for `cli.js stop <service>`.
 */
export async function stopService(name: string, log: (line: string) => void = stackLog): Promise<boolean> {
  knownService(name);
  const wasRunning = await stopServiceProcess(loadStackConfig(), name);
  log(wasRunning ? `${name} stopped` : `${name} was not running`);
  return wasRunning;
}

/**
 * Starts one service in the running stack (provisions and migrates its database first when it has one) and
 * returns when its /health/ready says ok; a no-op for a service already healthy. `cli.js start <service>`.
 */
export async function startService(name: string, log: (line: string) => void = stackLog): Promise<void> {
  knownService(name);
  const config = loadStackConfig();
  await prepareDatabase(config, name);
  await startServices(config, log, [name]);
}

/** Rebuilt a service? Applies its new migrations, stops it (SIGTERM) and starts it again, healthy. */
export async function restartService(name: string, log: (line: string) => void = stackLog): Promise<void> {
  knownService(name);
  const config = loadStackConfig();
  await prepareDatabase(config, name);
  await stopServiceProcess(config, name);
  await startServices(config, log, [name]);
}

/**
 * Stops every part recorded for this checkout, services first, even with stale records (a part is found by the
 * checkout id it was started with), then any other process still carrying this checkout's id; idempotent.
 */
export async function down(log: (line: string) => void = stackLog): Promise<void> {
  const config = loadStackConfig();
  await stopParts(ALL_PARTS, log);
  const left = stackProcesses(config.dir);
  await Promise.all(left.map((p) => terminate(p.pid, p.part ?? 'process', 10_000)));
  if (left.length)
    log(`stopped ${left.length} more process(es) of this checkout: ${left.map((p) => p.pid).join(', ')}`);
}

export { databaseUrl };
