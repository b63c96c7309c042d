import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, kafkaClientOptions } from '@checkout/service-kit';
import { redisAuthOf } from '@checkout/stock-gate';
import { loadOrderConfig } from './order.config';

const env = {
  SERVICE_NAME: 'order',
  PORT: '3001',
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/order_svc',
  REDIS_URL: 'redis://127.0.0.1:6379',
  INVENTORY_URL: 'http://127.0.0.1:3002',
};
const SECRET = 'the-secret-value';

/** Asserts that loading the environment fails naming `variable`, and that the message shows no secret. */
function refuses(extra: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadOrderConfig({ ...env, ...extra }),
    (e: unknown) => e instanceof ConfigError && e.message.includes(variable) && !e.message.includes(SECRET),
  );
}

describe('order config: Kafka and Redis credentials', () => {
  it('given no credentials, builds plain clients (the local stack without SASL)', () => {
    const config = loadOrderConfig(env);
    assert.deepEqual(kafkaClientOptions(config), { brokers: ['127.0.0.1:9092'], security: {} });
    assert.deepEqual(redisAuthOf(config), {});
  });

  it('given SCRAM-SHA-512 credentials and TLS with a CA file, builds the SASL and TLS options', () => {
    const ca = join(mkdtempSync(join(tmpdir(), 'order-config-')), 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const config = loadOrderConfig({
      ...env,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'order',
      KAFKA_SASL_PASSWORD: SECRET,
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: ca,
      REDIS_USERNAME: 'order',
      REDIS_PASSWORD: SECRET,
    });
    const { security } = kafkaClientOptions(config);
    assert.deepEqual(security.sasl, { mechanism: 'scram-sha-512', username: 'order', password: SECRET });
    assert.deepEqual(security.ssl, {
      ca: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
    });
    assert.deepEqual(redisAuthOf(config), { username: 'order', password: SECRET });
  });

  it('given KAFKA_SSL=true without a CA file, trusts the system CAs', () => {
    const config = loadOrderConfig({ ...env, KAFKA_SSL: 'true' });
    assert.equal(kafkaClientOptions(config).security.ssl, true);
  });

  it('refuses at boot a mechanism without its username or password, naming the variable', () => {
    refuses({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'order' }, 'KAFKA_SASL_PASSWORD');
    refuses({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_PASSWORD: SECRET }, 'KAFKA_SASL_USERNAME');
  });

  it('refuses credentials without a mechanism, an unknown mechanism and a bad KAFKA_SSL, showing no value', () => {
    refuses({ KAFKA_SASL_USERNAME: 'order', KAFKA_SASL_PASSWORD: SECRET }, 'KAFKA_SASL_MECHANISM');
    refuses(
      { KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'o', KAFKA_SASL_PASSWORD: SECRET },
      'KAFKA_SASL_MECHANISM',
    );
    refuses({ KAFKA_SSL: 'yes' }, 'KAFKA_SSL');
  });

  it('refuses a CA file without TLS or that cannot be read', () => {
    refuses({ KAFKA_SSL_CA_FILE: '/etc/hostname' }, 'KAFKA_SSL_CA_FILE');
    refuses({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/nonexistent/ca.pem' }, 'KAFKA_SSL_CA_FILE');
  });

  it('refuses a Redis username without a password', () => {
    refuses({ REDIS_USERNAME: 'order' }, 'REDIS_PASSWORD');
  });
});
