import { accessSync, constants, readFileSync } from 'node:fs';
import { Kafka, KafkaConfig, SASLOptions, logLevel } from 'kafkajs';
import { z } from 'zod';
// kafkajs 2.2.4 runs a 1 ms timer loop per broker connection at rest; fixed in place once per process.
import './kafkajs-idle-fix';

/** How a client proves who it is to the cluster: TLS and SASL, both absent on a plain local broker. */
export interface KafkaSecurity {
  ssl?: KafkaConfig['ssl'];
  sasl?: SASLOptions;
}

/** The SASL mechanisms a client may use (KAFKA_SASL_MECHANISM). */
export const KAFKA_SASL_MECHANISMS = ['scram-sha-256', 'scram-sha-512', 'plain'] as const;

/** The Kafka security variables, a block every config that builds Kafka clients extends. */
export const KAFKA_SECURITY_ENV = {
  KAFKA_SASL_MECHANISM: z.enum(KAFKA_SASL_MECHANISMS).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  KAFKA_SSL: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** PEM bundle of the CAs the broker certificates are checked against (default: the system's). */
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
};

/** The Kafka security variables once parsed. */
export type KafkaSecurityEnv = {
  KAFKA_SASL_MECHANISM?: (typeof KAFKA_SASL_MECHANISMS)[number];
  KAFKA_SASL_USERNAME?: string;
  KAFKA_SASL_PASSWORD?: string;
  KAFKA_SSL: boolean;
  KAFKA_SSL_CA_FILE?: string;
};

const readable = (file: string): boolean => {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The rules between the variables (a superRefine of every schema that spreads KAFKA_SECURITY_ENV): a mechanism
 * needs both credentials, credentials need a mechanism, a CA file needs TLS and must be readable. Messages name
 * variables, never values.
 */
export function checkKafkaSecurity(env: KafkaSecurityEnv, ctx: z.RefinementCtx): void {
  const issue = (path: keyof KafkaSecurityEnv, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  if (env.KAFKA_SASL_MECHANISM) {
    if (!env.KAFKA_SASL_USERNAME) issue('KAFKA_SASL_USERNAME', 'required when KAFKA_SASL_MECHANISM is set');
    if (!env.KAFKA_SASL_PASSWORD) issue('KAFKA_SASL_PASSWORD', 'required when KAFKA_SASL_MECHANISM is set');
  } else if (env.KAFKA_SASL_USERNAME || env.KAFKA_SASL_PASSWORD) {
    issue('KAFKA_SASL_MECHANISM', 'required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set');
  }
  if (env.KAFKA_SSL_CA_FILE) {
    if (!env.KAFKA_SSL) issue('KAFKA_SSL_CA_FILE', 'set, but KAFKA_SSL is not true');
    else if (!readable(env.KAFKA_SSL_CA_FILE))
      issue('KAFKA_SSL_CA_FILE', `cannot read ${env.KAFKA_SSL_CA_FILE}`);
  }
}

/** The Kafka security variables alone, for tools that have no service config (DLQ replay, benches). */
export const KafkaSecurityEnvSchema = z.object(KAFKA_SECURITY_ENV).superRefine(checkKafkaSecurity);

/** The client options of parsed security variables (reads the CA file). */
export function kafkaSecurityOf(env: KafkaSecurityEnv): KafkaSecurity {
  const security: KafkaSecurity = {};
  if (env.KAFKA_SSL) {
    security.ssl = env.KAFKA_SSL_CA_FILE ? { ca: [readFileSync(env.KAFKA_SSL_CA_FILE, 'utf8')] } : true;
  }
  const {
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: username,
    KAFKA_SASL_PASSWORD: password,
  } = env;
  if (mechanism && username && password) security.sasl = { mechanism, username, password };
  return security;
}

/** Parses the security variables of an environment; throws naming every bad variable (never a value). */
export function kafkaSecurityFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaSecurity {
  const result = KafkaSecurityEnvSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid Kafka security settings: ${problems}`);
  }
  return kafkaSecurityOf(result.data);
}

/**
 * The one place that builds a Kafka client, so a switch of client library touches this lib only. Every
 * client of a secured cluster passes the security parsed from its config.
 */
export function createKafka(brokers: string[], clientId: string, security: KafkaSecurity = {}): Kafka {
  return new Kafka({
    clientId,
    brokers,
    ...security,
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 10 },
    logCreator:
      () =>
      ({ level, log }) => {
        if (level <= logLevel.ERROR)
          console.error(JSON.stringify({ level: 'error', component: 'kafkajs', ...log }));
      },
  });
}

/** Parses a comma-separated broker list (KAFKA_BROKERS). */
export const parseBrokers = (value: string): string[] =>
  value
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
