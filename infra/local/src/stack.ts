import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import { REPO_ROOT, StackConfig, loadStackConfig } from './config';
import { registerConnectors, startConnect, stopConnect } from './connect';
import { ensureJars } from './jars';
import { ensureTopics, startKafka, stopKafka } from './kafka';
import { databaseUrl, grantOutboxToCdc, provisionDatabases, startPostgres, stopPostgres } from './postgres';
import { checkPrerequisites } from './prerequisites';
import { run } from './processes';
import { startRedis, stopRedis } from './redis';
import { serviceEnv, startServices, stopServiceProcess, stopServices } from './services';
import { DB_SERVICES, SERVICES } from './topology';

/** What `up` should start: the infrastructure only (for integration tests of a lib) or everything. */
export interface UpOptions {
  services?: boolean;
  log?: (line: string) => void;
}

/** Timings of one `up`, in ms, for the notes and the demo. */
export type UpTimings = Record<string, number>;

/** Runs each service's TypeORM migrations with its own role (services never `synchronize`). */
export function migrateAll(config: StackConfig, only?: string): void {
  for (const svc of DB_SERVICES.filter((s) => !only || s.name === only)) {
    const script = join(REPO_ROOT, 'apps', svc.name, 'dist', 'src', 'migrate.js');
    if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
    run(process.execPath, [script], { env: { ...process.env, ...serviceEnv(config, svc.name) } });
  }
}

/**
 * Starts the whole local stack, idempotently: PostgreSQL, Redis, Kafka, migrations, Kafka Connect with one
 * Debezium connector per service database, topics, then the services. Returns when every part is healthy.
 */
export async function up(options: UpOptions = {}): Promise<UpTimings> {
  const log = options.log ?? ((line: string) => console.log(`[stack] ${line}`));
  const config = loadStackConfig();
  const timings: UpTimings = {};
  const started = Date.now();
  const step = async (name: string, fn: () => unknown) => {
    const started = Date.now();
    await fn();
    timings[name] = Date.now() - started;
    log(`${name} ready (${timings[name]} ms)`);
  };
  checkPrerequisites();
  let jars!: ReturnType<typeof ensureJars>;
  await step('jars', () => (jars = ensureJars(config, log)));
  await Promise.all([
    step('postgres', async () => {
      await startPostgres(config, log);
      await provisionDatabases(config);
      migrateAll(config);
      await grantOutboxToCdc(config);
    }),
    step('redis', () => startRedis(config)),
    step('kafka', async () => {
      await startKafka(config, jars, log);
      await ensureTopics(config, [...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic)]);
    }),
  ]);
  await step('connect', async () => {
    await startConnect(config, jars);
    await registerConnectors(config);
  });
  if (options.services !== false) await step('services', () => startServices(config, log));
  // PostgreSQL, Redis and Kafka start in parallel: the total is wall time, not the sum of the steps.
  timings.total = Date.now() - started;
  return timings;
}

const stackLog = (line: string) => console.log(`[stack] ${line}`);

function knownService(name: string): void {
  if (!SERVICES.some((s) => s.name === name))
    throw new Error(`unknown service ${name} (known: ${SERVICES.map((s) => s.name).join(', ')})`);
}

/** A service's database side, idempotently: its database and role, its migrations, the CDC grant on its outbox. */
async function prepareDatabase(config: StackConfig, name: string): Promise<void> {
  if (!DB_SERVICES.some((s) => s.name === name)) return;
  await provisionDatabases(config);
  migrateAll(config, name);
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

/** Stops everything `up` started, services first; idempotent. */
export async function down(log: (line: string) => void = stackLog): Promise<void> {
  const config = loadStackConfig();
  await stopServices(config);
  if (await stopConnect(config)) log('connect stopped');
  if (await stopKafka(config)) log('kafka stopped');
  if (await stopRedis(config)) log('redis stopped');
  if (await stopPostgres(config)) log('postgres stopped');
}

export { databaseUrl };
