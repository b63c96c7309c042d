import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StackConfig } from './config';
import { Jars } from './jars';
import { jvmArgs } from './kafka';
import { partState } from './parts';
import { javaCommand } from './prerequisites';
import { startDetached, stopManaged, waitHealthy } from './processes';
import { clientAuthEnv, connectClientProperties } from './sasl';
import { CONNECTOR_DIR, ConnectorDefinition } from './connectors';
import { OUTBOX_SERVICES, dbEnvPrefix } from './topology';
import { waitFor } from './wait';

export { CONNECTOR_DIR, type ConnectorDefinition } from './connectors';

/** Reads every connector definition in infra/debezium. */
export function connectorDefinitions(): ConnectorDefinition[] {
  return readdirSync(CONNECTOR_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(CONNECTOR_DIR, f), 'utf8')) as ConnectorDefinition);
}

/** Distributed worker settings: internal topics RF 1, quick rebalance after a restart, frequent offset flush. */
export function workerProperties(config: StackConfig, pluginPath: string): string {
  return [
    `bootstrap.servers=${config.kafka.bootstrap}`,
    'group.id=checkout-connect',
    'key.converter=org.apache.kafka.connect.storage.StringConverter',
    'value.converter=org.apache.kafka.connect.storage.StringConverter',
    'config.storage.topic=_connect-configs',
    'offset.storage.topic=_connect-offsets',
    'status.storage.topic=_connect-status',
    'config.storage.replication.factor=1',
    'offset.storage.replication.factor=1',
    'status.storage.replication.factor=1',
    'offset.storage.partitions=1',
    'status.storage.partitions=1',
    'offset.flush.interval.ms=1000',
    // The worker's own consumers (config, offset and status logs) hold an empty fetch this long: an idle worker
    // sends one fetch per log every 10 s instead of two a second. A new record still answers the fetch at once.
    'fetch.max.wait.ms=10000',
    // The worker's group client waits at most this long for network IO when it has no request in flight, and its
    // heartbeat thread checks that often whether a heartbeat is due: at the default 100 ms both wake 10 times a
    // second at rest. Heartbeats still go every 3 s; a failed request is retried after 1 s instead of 0.1 s.
    'retry.backoff.ms=1000',
    'scheduled.rebalance.max.delay.ms=0',
    `listeners=http://127.0.0.1:${config.connect.port}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${config.connect.port}`,
    `plugin.path=${pluginPath}`,
    'plugin.discovery=service_load',
    // Connector JSON says ${env:ORDER_DB_HOST}; the worker resolves it from its own environment.
    'config.providers=env',
    'config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider',
    ...connectClientProperties(config.auth, config.tls),
    '',
  ].join('\n');
}

/** The environment the worker resolves connector placeholders from, for the local stack. */
export function connectEnv(config: StackConfig): Record<string, string> {
  const env: Record<string, string> = {
    CDC_DB_USER: config.cdc.user,
    CDC_DB_PASSWORD: config.cdc.password,
    ...clientAuthEnv(config.auth, config.tls),
  };
  for (const svc of OUTBOX_SERVICES) {
    const prefix = dbEnvPrefix(svc.name);
    env[`${prefix}_HOST`] = '127.0.0.1';
    env[`${prefix}_PORT`] = String(config.pg.port);
    env[`${prefix}_NAME`] = svc.database;
  }
  return env;
}

async function rest<T>(
  config: StackConfig,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${config.connect.url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

interface ConnectorStatus {
  connector: { state: string };
  tasks: { id: number; state: string; trace?: string }[];
}

/** Whether a connector and all its tasks are RUNNING; throws with the trace when a task FAILED. */
export async function connectorRunning(config: StackConfig, name: string): Promise<boolean> {
  const { status, body } = await rest<ConnectorStatus>(config, `/connectors/${name}/status`);
  if (status !== 200) return false;
  const failed = body.tasks.find((t) => t.state === 'FAILED');
  if (failed) throw new Error(`connector ${name} task ${failed.id} FAILED: ${failed.trace?.split('\n')[0]}`);
  return (
    body.connector.state === 'RUNNING' &&
    body.tasks.length > 0 &&
    body.tasks.every((t) => t.state === 'RUNNING')
  );
}

async function restReady(config: StackConfig): Promise<boolean> {
  const { status } = await rest(config, '/connectors');
  return status === 200;
}

/** Starts the Connect worker detached unless this checkout's runs, and waits for its REST API; whether it started. */
export async function startConnect(config: StackConfig, jars: Jars): Promise<boolean> {
  const wait = { timeoutMs: 120_000, intervalMs: 500 };
  if ((await partState(config, 'connect')) === 'ours') {
    await waitFor('Kafka Connect REST API', () => restReady(config), wait);
    return false;
  }
  const dir = join(config.dir, 'connect');
  mkdirSync(dir, { recursive: true });
  const props = join(dir, 'worker.properties');
  writeFileSync(props, workerProperties(config, jars.pluginPath));
  const pid = startDetached(config.run, config.logs, {
    name: 'connect',
    command: javaCommand(),
    args: [
      ...jvmArgs(config, '512m'),
      `-javaagent:${jars.connectAgent}`,
      '-cp',
      jars.classpath,
      'org.apache.kafka.connect.cli.ConnectDistributed',
      props,
    ],
    ports: [config.connect.port],
    env: { ...process.env, ...connectEnv(config) },
    cwd: dir,
  });
  await waitHealthy('Kafka Connect REST API', pid, () => restReady(config), wait);
  return true;
}

/** Registers (PUT, idempotent) every connector of infra/debezium and waits until each one is RUNNING. */
export async function registerConnectors(config: StackConfig): Promise<string[]> {
  const names: string[] = [];
  for (const def of connectorDefinitions()) {
    // PUT is idempotent: a worker still joining its group (409), or too busy to answer in time, is asked again.
    const answer = await waitFor(
      `connector ${def.name} registered`,
      async () => {
        const { status, body } = await rest(config, `/connectors/${def.name}/config`, {
          method: 'PUT',
          body: JSON.stringify(def.config),
        });
        return status === 409 || status >= 500 ? false : { status, body };
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    if (answer.status !== 200 && answer.status !== 201)
      throw new Error(`registering ${def.name} failed (${answer.status}): ${JSON.stringify(answer.body)}`);
    names.push(def.name);
  }
  for (const name of names) {
    await waitFor(`connector ${name} RUNNING`, () => connectorRunning(config, name), {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
  }
  return names;
}

export const stopConnect = (config: StackConfig) => stopManaged(config.run, 'connect', 60_000);
