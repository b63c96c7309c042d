import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { StackAuth, stackAuth } from './sasl';
import { StackTls, stackTls } from './tls';
import { SERVICES } from './topology';

/**
 * Where the repo is: the nearest folder up from this file (infra/local/dist/src when compiled, infra/local/src
 * under jest) that holds infra/local.
 */
export const REPO_ROOT = (() => {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'infra', 'local', 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no infra/local above ${__dirname}: not in a checkout`);
  }
})();

/** STACK_PORT_OFFSET moves every port of the stack at once (a second clone beside the first). */
export function portOffset(): number {
  const raw = process.env.STACK_PORT_OFFSET;
  if (raw === undefined || raw === '') return 0;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 2000)
    throw new Error(`STACK_PORT_OFFSET must be an integer from 0 to 2000, got ${raw}`);
  return value;
}

/** A port from its own variable, else its default moved by STACK_PORT_OFFSET. */
const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback + portOffset();
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 65535)
    throw new Error(`${name} must be a port number, got ${raw}`);
  return value;
};

/** INTERNAL_PORT of every service in the local stack is its PORT plus this. */
export const INTERNAL_PORT_OFFSET = 6000;

/** The local stack's settings, read once from the environment (every port overridable). */
export interface StackConfig {
  dir: string;
  logs: string;
  run: string;
  pg: { port: number; superuser: string; password: string };
  kafka: {
    port: number;
    controllerPort: number;
    bootstrap: string;
    /**
     * A second client listener of the broker whose advertised address is `link.proxyPort`, where nothing listens
     * unless a test puts a fault proxy there (tests/faults): a client bootstrapped on the proxy port gets metadata
     * that keeps every later connection on the proxy, so all its Kafka traffic crosses the faulty link.
     */
    link: { port: number; proxyPort: number };
  };
  connect: { port: number; url: string };
  redis: { port: number; url: string };
  servicePorts: Record<string, number>;
  /** Each service's internal port (/metrics, /health/*): its API port + 6000, so offset stacks never collide. */
  internalPorts: Record<string, number>;
  /** Password of every service's dev login role (dev only; production reads secrets from the environment). */
  devDbPassword: string;
  cdc: { user: string; password: string };
  /** Kafka SASL and Redis requirepass (`STACK_KAFKA_SASL=true`); undefined: no authentication. */
  auth?: StackAuth;
  /** TLS on the broker's client listener (`STACK_KAFKA_TLS=true`); undefined: plaintext. */
  tls?: StackTls;
}

export function loadStackConfig(): StackConfig {
  const dir = resolve(process.env.STACK_DIR ?? join(REPO_ROOT, '.stack'));
  const kafkaPort = int('KAFKA_PORT', 59092);
  const connectPort = int('CONNECT_PORT', 58083);
  const redisPort = int('REDIS_PORT', 56379);
  const servicePorts = Object.fromEntries(SERVICES.map((s) => [s.name, int(s.portEnv, s.defaultPort)]));
  return {
    dir,
    logs: join(dir, 'logs'),
    run: join(dir, 'run'),
    pg: {
      port: int('PG_PORT', 55432),
      superuser: 'postgres',
      password: process.env.PG_SUPERUSER_PASSWORD ?? 'postgres',
    },
    kafka: {
      port: kafkaPort,
      controllerPort: int('KAFKA_CONTROLLER_PORT', 59093),
      bootstrap: `127.0.0.1:${kafkaPort}`,
      // Beside the client port, so a stack moved by KAFKA_PORT moves them too.
      link: { port: kafkaPort + 2, proxyPort: kafkaPort + 3 },
    },
    connect: { port: connectPort, url: `http://127.0.0.1:${connectPort}` },
    redis: { port: redisPort, url: `redis://127.0.0.1:${redisPort}` },
    servicePorts,
    internalPorts: Object.fromEntries(
      Object.entries(servicePorts).map(([name, port]) => [name, port + INTERNAL_PORT_OFFSET]),
    ),
    devDbPassword: process.env.DEV_DB_PASSWORD ?? 'dev-password',
    cdc: { user: 'debezium', password: process.env.CDC_DB_PASSWORD ?? 'debezium-dev' },
    auth: stackAuth(),
    tls: stackTls(dir),
  };
}

/** Whether the stack folder exists at all (nothing was ever started). */
export const stackExists = (config: StackConfig): boolean => existsSync(config.dir);
