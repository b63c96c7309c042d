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
import { serviceEnv, startServices, stopService, stopServices } from './services';
import { DB_SERVICES } from './topology';

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

/** Rebuilt a service? Applies its new migrations, stops it (SIGTERM) and starts it again, healthy. */
export async function restartService(
  name: string,
  log: (line: string) => void = (line) => console.log(`[stack] ${line}`),
): Promise<void> {
  const config = loadStackConfig();
  if (DB_SERVICES.some((s) => s.name === name)) {
    migrateAll(config, name);
    await grantOutboxToCdc(config);
  }
  await stopService(config, name);
  await startServices(config, log);
}

/** Stops everything `up` started, services first; idempotent. */
export async function down(
  log: (line: string) => void = (line) => console.log(`[stack] ${line}`),
): Promise<void> {
  const config = loadStackConfig();
  await stopServices(config);
  if (await stopConnect(config)) log('connect stopped');
  if (await stopKafka(config)) log('kafka stopped');
  if (await stopRedis(config)) log('redis stopped');
  if (await stopPostgres(config)) log('postgres stopped');
}

export { databaseUrl };
