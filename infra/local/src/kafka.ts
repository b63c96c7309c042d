import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { StackConfig } from './config';
import { Jars } from './jars';
import { writeRecord } from './ownership';
import { partState } from './parts';
import { javaCommand } from './prerequisites';
import { runAsync, startDetached, stopManaged, waitHealthy } from './processes';
import {
  assertScramUsers,
  brokerListener,
  brokerSaslProperties,
  formatScramArgs,
  markScramUsers,
  stackClientSecurity,
} from './sasl';
import { brokerTlsProperties, ensureBrokerCertificates } from './tls';
import { waitFor } from './wait';

const LOG4J2 = `status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
logger.debezium.name = io.debezium
logger.debezium.level = INFO
# Every offset flush (each second, per task) logs "Committing offsets for N acknowledged messages" at INFO.
logger.sourcetask.name = org.apache.kafka.connect.runtime.WorkerSourceTask
logger.sourcetask.level = WARN
`;

/** The JVM flags of the stack's Java processes: small heaps, log4j2 config, no GC logs. */
export function jvmArgs(config: StackConfig, heap: string): string[] {
  const log4j = join(config.dir, 'config', 'log4j2.properties');
  mkdirSync(join(config.dir, 'config'), { recursive: true });
  writeFileSync(log4j, LOG4J2);
  return [
    `-Xms${heap}`,
    `-Xmx${heap}`,
    '-XX:+UseSerialGC',
    // The JVM's own counters (jstat's) are sampled every 50 ms by default, which wakes its periodic task thread
    // 20 times a second: once a second is enough for a glance with jstat.
    '-XX:PerfDataSamplingInterval=1000',
    // The monitor deflation thread checks 4 times a second whether idle object monitors should be freed (it also
    // does so every 60 s regardless): at rest it was Connect's busiest thread (0.09% of a core, jstack cpu=).
    '-XX:+UnlockDiagnosticVMOptions',
    '-XX:AsyncDeflationInterval=1000',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4j}`,
  ];
}

/** The name of the broker's listener for clients behind a fault proxy (StackConfig.kafka.link). */
const LINK = 'LINK';

/** Single-node KRaft settings (combined broker and controller, replication factor 1 everywhere). */
export function serverProperties(config: StackConfig, logDirs: string): string {
  const { port, controllerPort, link } = config.kafka;
  const listener = brokerListener(config.auth, config.tls);
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=${listener}://127.0.0.1:${port},${LINK}://127.0.0.1:${link.port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=${listener}://127.0.0.1:${port},${LINK}://127.0.0.1:${link.proxyPort}`,
    'controller.listener.names=CONTROLLER',
    `inter.broker.listener.name=${listener}`,
    `listener.security.protocol.map=${listener}:${listener},${LINK}:${listener},CONTROLLER:PLAINTEXT`,
    ...brokerSaslProperties(config.auth, listener),
    ...brokerSaslProperties(config.auth, LINK),
    ...brokerTlsProperties(config.tls),
    `log.dirs=${logDirs}`,
    'num.partitions=3',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=10',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // The controller appends a no-op record to the metadata log every 500 ms by default, a disk write and a
    // metadata update on an idle single-node cluster; nothing here waits on it.
    'metadata.max.idle.interval.ms=10000',
    // Kafka sizes its pools for a big machine: 8 request handlers (and 8 more for the controller) and 3 network
    // threads per listener, each waking every 300 ms when idle. This broker has 2 cores and a dozen clients.
    // At rest, 16 -> 4 handlers and 9 -> 3 network threads: 0.82% -> 0.54% and 0.84% -> 0.73% of a core.
    'num.io.threads=2',
    'num.network.threads=1',
    // The group coordinator runs 4 event threads by default, each woken by the timers of the groups it owns; a
    // dozen groups need one.
    'group.coordinator.threads=1',
    'auto.create.topics.enable=true',
    'log.retention.hours=168',
    '',
  ].join('\n');
}

/** A kafkajs admin-capable client on the stack's broker. */
export function stackKafka(config: StackConfig, clientId = 'local-stack'): Kafka {
  return new Kafka({
    clientId,
    brokers: [config.kafka.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
    ...stackClientSecurity(config.auth, config.tls),
  });
}

async function brokerReady(config: StackConfig): Promise<boolean> {
  const admin = stackKafka(config).admin();
  await admin.connect();
  try {
    await admin.listTopics();
    return true;
  } finally {
    await admin.disconnect();
  }
}

/** The cluster id this checkout's Kafka storage was formatted with, if it was. */
function formattedClusterId(data: string): string | undefined {
  const file = join(data, 'meta.properties');
  if (!existsSync(file)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
}

/** The cluster id of the broker answering on the stack's port. */
async function servedClusterId(config: StackConfig): Promise<string> {
  const admin = stackKafka(config).admin();
  await admin.connect();
  try {
    return (await admin.describeCluster()).clusterId;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Formats storage on first start and runs the broker detached; returns when kafkajs can list topics. Reuses a
 * broker only when it is this checkout's (its record and its cluster id); returns whether it started one.
 */
export async function startKafka(
  config: StackConfig,
  jars: Jars,
  log: (line: string) => void,
): Promise<boolean> {
  const dir = join(config.dir, 'kafka');
  const data = join(dir, 'data');
  const wait = { timeoutMs: 90_000, intervalMs: 500 };
  if ((await partState(config, 'kafka')) === 'ours') {
    await waitFor('Kafka to answer metadata requests', () => brokerReady(config), wait);
    const served = await servedClusterId(config);
    if (served !== formattedClusterId(data))
      throw new Error(`Kafka on port ${config.kafka.port} is cluster ${served}, not this checkout's`);
    return false;
  }
  const props = join(dir, 'server.properties');
  mkdirSync(data, { recursive: true });
  if (config.tls) ensureBrokerCertificates(config.tls);
  writeFileSync(props, serverProperties(config, data));
  const jvm = jvmArgs(config, '512m');
  if (!formattedClusterId(data)) {
    log('formatting Kafka KRaft storage (first run only)');
    await runAsync(javaCommand(), [
      ...jvm,
      '-cp',
      jars.classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      randomUUID(),
      '-c',
      props,
      '--ignore-formatted',
      ...formatScramArgs(config.auth),
    ]);
    markScramUsers(data, config.auth);
  }
  assertScramUsers(data, config.auth);
  const pid = startDetached(config.run, config.logs, {
    name: 'kafka',
    command: javaCommand(),
    args: [...jvm, '-cp', jars.classpath, 'kafka.Kafka', props],
    ports: [config.kafka.port, config.kafka.controllerPort, config.kafka.link.port],
    cwd: dir,
  });
  writeRecord(
    config.run,
    'kafka',
    pid,
    [config.kafka.port, config.kafka.controllerPort, config.kafka.link.port],
    { kafkaClusterId: formattedClusterId(data) },
    [javaCommand(), ...jvm, '-cp', jars.classpath, 'kafka.Kafka', props].join(' '),
  );
  await waitHealthy('Kafka to answer metadata requests', pid, () => brokerReady(config), wait);
  return true;
}

/** Creates the given topics if missing (partitions keyed by order id). */
export async function ensureTopics(config: StackConfig, topics: string[], partitions = 3): Promise<void> {
  const admin = stackKafka(config).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}

export const stopKafka = (config: StackConfig) => stopManaged(config.run, 'kafka', 60_000);
