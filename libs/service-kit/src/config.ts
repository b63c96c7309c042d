import { z } from 'zod';
import {
  KAFKA_SECURITY_ENV,
  KafkaSecurity,
  KafkaSecurityEnv,
  checkKafkaSecurity,
  kafkaSecurityOf,
  parseBrokers,
} from '@checkout/messaging';

/** Settings every service reads from its environment. */
export const BaseConfigSchema = z
  .object({
    SERVICE_NAME: z.string().min(1),
    PORT: z.coerce.number().int().min(1).max(65535),
    /**
     * Port of /metrics and /health/* (probes and Prometheus only; never exposed with the API). Default PORT + 6000
     * (see internalPort).
     */
    INTERNAL_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    KAFKA_BROKERS: z.string().min(1),
    DATABASE_URL: z.string().url().optional(),
    /** Connections of the service's database pool. */
    DB_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
    /** Parameterised statements as named prepared statements; false behind a transaction-mode pooler. */
    DB_PREPARED_STATEMENTS: z.enum(['true', 'false']).default('true'),
    /** The tenants (a JSON array of Tenant, a secret); the dev seed's are added when DEV_SEED is true. */
    TENANTS: z.string().optional(),
    /** The tenants' PSP accounts (a JSON array of PspCredentials, a secret of payment and the PSP only). */
    TENANT_PSP_CREDENTIALS: z.string().optional(),
    /** Adds the dev seed (tenants acme and globex, their PSP accounts): local stack only. */
    DEV_SEED: z.enum(['true', 'false']).default('false'),
    /** Largest accepted HTTP body. */
    BODY_LIMIT: z.string().default('64kb'),
    /**
     * How long SIGTERM may take (consumers drain, in-flight HTTP requests and PSP calls finish) before the process
     * exits anyway with code 1.
     */
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).default(20_000),
    /** Replication slot of the service's outbox connector; default `<service>_outbox` (infra/debezium). */
    OUTBOX_SLOT_NAME: z.string().min(1).optional(),
    /** The outbox and consumer-lag gauges are read when /metrics is scraped, at most once per this many ms (5 s). */
    MESSAGING_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).optional(),
    /** How often relay-confirmed outbox rows and old inbox rows are pruned (default 60 s). */
    MESSAGING_RETENTION_INTERVAL_MS: z.coerce.number().int().min(100).optional(),
    /** Relay-confirmed outbox rows are kept this long (default 24 h; Kafka holds the events). */
    OUTBOX_RETENTION_MS: z.coerce.number().int().min(0).optional(),
    /** Inbox rows are kept this long (default 8 days): longer than the topics' retention (7 days by default). */
    INBOX_RETENTION_MS: z.coerce.number().int().min(0).optional(),
  })
  // Kafka credentials (TLS, SASL): their own block. The rules between them (a mechanism needs credentials) run
  // in parseConfig: a refinement here would forbid the services' .extend() of keys such as DATABASE_URL.
  .extend(KAFKA_SECURITY_ENV);
export type BaseConfig = z.infer<typeof BaseConfigSchema>;

/** A configuration error, raised at boot so a bad deployment fails fast with the variable's name. */
export class ConfigError extends Error {}

/** Parses the environment once with the given schema; throws ConfigError naming every bad variable. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema
    .superRefine((value, ctx) => {
      if (typeof value === 'object' && value !== null && 'KAFKA_SSL' in value)
        checkKafkaSecurity(value as KafkaSecurityEnv, ctx);
    })
    .safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  return result.data;
}

/** The messaging settings of a service with their defaults filled in. */
export function messagingSettings(config: BaseConfig) {
  return {
    slotName: config.OUTBOX_SLOT_NAME ?? `${config.SERVICE_NAME.replace(/-/g, '_')}_outbox`,
    probeIntervalMs: config.MESSAGING_PROBE_INTERVAL_MS ?? 5_000,
    retentionIntervalMs: config.MESSAGING_RETENTION_INTERVAL_MS ?? 60_000,
    outboxRetentionMs: config.OUTBOX_RETENTION_MS ?? 24 * 3_600_000,
    inboxRetentionMs: config.INBOX_RETENTION_MS ?? 8 * 24 * 3_600_000,
  };
}

/** The routes served only on the internal port (/metrics, /health/*), by path or by URL (the query after `?`). */
export const INTERNAL_ROUTE = /^\/(metrics|health)([/?]|$)/;

/** The port of /metrics and /health/*: INTERNAL_PORT, or PORT + 6000 (the local stack's convention). */
export function internalPort(config: Pick<BaseConfig, 'PORT' | 'INTERNAL_PORT'>): number {
  const port = config.INTERNAL_PORT ?? config.PORT + 6000;
  if (port === config.PORT) throw new ConfigError('INTERNAL_PORT must differ from PORT');
  if (port > 65535) throw new ConfigError(`INTERNAL_PORT is required when PORT + 6000 exceeds 65535`);
  return port;
}

/** What every Kafka client of a service is built from: the brokers and the TLS/SASL settings of its config. */
export function kafkaClientOptions(config: BaseConfig): { brokers: string[]; security: KafkaSecurity } {
  return { brokers: parseBrokers(config.KAFKA_BROKERS), security: kafkaSecurityOf(config) };
}
