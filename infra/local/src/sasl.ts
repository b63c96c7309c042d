import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SASLOptions } from 'kafkajs';
import { StackTls } from './tls';

/**
 * The local stack's credentials when it runs with `STACK_KAFKA_SASL=true`: the broker's client listener
 * is SASL_PLAINTEXT with SCRAM-SHA-512 users created when the storage is formatted, Connect and every client
 * log in, and Redis has `requirepass`. Dev values only, overridable; production reads secrets.
 */
export interface StackAuth {
  /** The user the services, Connect and the test helpers log in as. */
  kafkaUser: { username: string; password: string };
  /** The broker's own user on its SASL listener (inter-broker). */
  brokerUser: { username: string; password: string };
  redisPassword: string;
}

/** The SCRAM mechanism of the local SASL broker. */
export const STACK_SASL_MECHANISM = 'SCRAM-SHA-512';

/** The stack's credentials, or undefined when it runs without authentication (the default). */
export function stackAuth(env: NodeJS.ProcessEnv = process.env): StackAuth | undefined {
  if (env.STACK_KAFKA_SASL !== 'true') return undefined;
  return {
    kafkaUser: {
      username: env.STACK_KAFKA_SASL_USERNAME ?? 'checkout',
      password: env.STACK_KAFKA_SASL_PASSWORD ?? 'checkout-dev-secret',
    },
    brokerUser: { username: 'broker', password: env.STACK_KAFKA_BROKER_PASSWORD ?? 'broker-dev-secret' },
    redisPassword: env.STACK_REDIS_PASSWORD ?? 'redis-dev-secret',
  };
}

/** The name (and security protocol) of the broker's client listener. */
export const brokerListener = (auth: StackAuth | undefined, tls: StackTls | undefined): string =>
  `${auth ? 'SASL_' : ''}${tls ? 'SSL' : 'PLAINTEXT'}`;

const scramLogin = (user: { username: string; password: string }) =>
  `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user.username}" password="${user.password}";`;

/** Broker properties of the SASL listener named `listener` (none without auth). */
export function brokerSaslProperties(auth: StackAuth | undefined, listener: string): string[] {
  if (!auth) return [];
  return [
    `sasl.enabled.mechanisms=${STACK_SASL_MECHANISM}`,
    `sasl.mechanism.inter.broker.protocol=${STACK_SASL_MECHANISM}`,
    `listener.name.${listener.toLowerCase()}.${STACK_SASL_MECHANISM.toLowerCase()}.sasl.jaas.config=${scramLogin(auth.brokerUser)}`,
  ];
}

/** `kafka-storage format` flags that create the SCRAM users in the new cluster's metadata. */
export function formatScramArgs(auth: StackAuth | undefined): string[] {
  if (!auth) return [];
  return [auth.brokerUser, auth.kafkaUser].flatMap((u) => [
    '--add-scram',
    `${STACK_SASL_MECHANISM}=[name=${u.username},password=${u.password}]`,
  ]);
}

const SCRAM_MARKER = 'scram-users';

/** Records, next to the formatted storage, which SCRAM users it was formatted with (names only). */
export function markScramUsers(dataDir: string, auth: StackAuth | undefined): void {
  if (auth)
    writeFileSync(join(dataDir, SCRAM_MARKER), `${auth.brokerUser.username},${auth.kafkaUser.username}\n`);
}

/**
 * SCRAM users exist only if the storage was formatted with them: a SASL start on a storage formatted without
 * them (or with other users) would never get healthy, so it stops here with what to do.
 */
export function assertScramUsers(dataDir: string, auth: StackAuth | undefined): void {
  if (!auth) return;
  const marker = join(dataDir, SCRAM_MARKER);
  const expected = `${auth.brokerUser.username},${auth.kafkaUser.username}`;
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== expected)
    throw new Error(
      `STACK_KAFKA_SASL=true but the Kafka storage in ${dataDir} was formatted without the SCRAM users ` +
        `${expected}; stop the stack and remove that folder (its topics are lost) to format it with them`,
    );
}

/**
 * Kafka Connect's client settings on a SASL and/or TLS broker: the worker's own clients (group membership,
 * config, offset and status topics), its source tasks' producers, sink consumers and admin clients each take
 * their own prefixed copy. The password is resolved from the worker's environment (`KAFKA_SASL_PASSWORD`), so
 * the properties file holds none; the CA is the stack's PEM file.
 */
export function connectClientProperties(auth: StackAuth | undefined, tls: StackTls | undefined): string[] {
  if (!auth && !tls) return [];
  const client = [`security.protocol=${brokerListener(auth, tls)}`];
  if (auth)
    client.push(
      `sasl.mechanism=${STACK_SASL_MECHANISM}`,
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required ' +
        'username="${env:KAFKA_SASL_USERNAME}" password="${env:KAFKA_SASL_PASSWORD}";',
    );
  if (tls) client.push('ssl.truststore.type=PEM', `ssl.truststore.location=${tls.caFile}`);
  return ['', 'producer.', 'consumer.', 'admin.'].flatMap((prefix) => client.map((line) => prefix + line));
}

/** The variables a service (or Connect) reads its Kafka and Redis credentials and Kafka CA from. */
export function clientAuthEnv(
  auth: StackAuth | undefined,
  tls: StackTls | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (auth)
    Object.assign(env, {
      KAFKA_SASL_MECHANISM: STACK_SASL_MECHANISM.toLowerCase(),
      KAFKA_SASL_USERNAME: auth.kafkaUser.username,
      KAFKA_SASL_PASSWORD: auth.kafkaUser.password,
      REDIS_PASSWORD: auth.redisPassword,
    });
  if (tls) Object.assign(env, { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: tls.caFile });
  return env;
}

/** The kafkajs SASL and TLS options of the stack's user (test helpers, benches, the demo, `up` itself). */
export function stackClientSecurity(
  auth: StackAuth | undefined,
  tls: StackTls | undefined,
): { sasl?: SASLOptions; ssl?: { ca: string[] } } {
  return {
    ...(auth ? { sasl: { mechanism: 'scram-sha-512', ...auth.kafkaUser } } : {}),
    ...(tls ? { ssl: { ca: [readFileSync(tls.caFile, 'utf8')] } } : {}),
  };
}
