import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import {
  StackConfig,
  ensureJars,
  loadStackConfig,
  runningPid,
  serviceEnv,
  signalGroup,
  stackAuth,
  stackTls,
  startKafka,
  startRedis,
  stopKafka,
  stopRedis,
} from '@checkout/local-stack';
import { createKafka } from '@checkout/messaging';
import { kafkaClientOptions } from '@checkout/service-kit';
import { StockGate, redisAuthOf } from '@checkout/stock-gate';
import { freePort } from '@checkout/testing';
import { OrderConfig, loadOrderConfig } from '../src/config/order.config';

/** Runs fn with console.error captured (kafkajs errors go there through createKafka's log creator). */
async function capturingErrors<T>(fn: () => Promise<T>): Promise<{ result: T | Error; logged: string }> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  try {
    return { result: await fn().catch((e: Error) => e), logged: lines.join('\n') };
  } finally {
    console.error = original;
  }
}

describe('Kafka SASL/SCRAM over TLS and Redis requirepass (the local stack with STACK_KAFKA_SASL=true and STACK_KAFKA_TLS=true)', () => {
  let config: StackConfig;
  let order: OrderConfig;
  const killLeftovers = () => {
    for (const name of ['kafka', 'redis']) {
      const pid = config && runningPid(config.run, name);
      if (pid) signalGroup(pid, 'SIGKILL');
    }
  };

  beforeAll(async () => {
    // One SASL broker and one redis-server of this spec's own, in a scratch folder: not a second stack.
    const stack = loadStackConfig();
    const jars = ensureJars(stack, () => undefined);
    const dir = mkdtempSync(join(tmpdir(), 'credentials-spec-'));
    const [kafkaPort, controllerPort, linkPort, redisPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    config = {
      ...stack,
      dir,
      logs: join(dir, 'logs'),
      run: join(dir, 'run'),
      kafka: {
        port: kafkaPort,
        controllerPort,
        bootstrap: `127.0.0.1:${kafkaPort}`,
        link: { port: linkPort, proxyPort: await freePort() },
      },
      redis: { port: redisPort, url: `redis://127.0.0.1:${redisPort}` },
      auth: stackAuth({ STACK_KAFKA_SASL: 'true', STACK_KAFKA_SASL_PASSWORD: `pw-${randomUUID()}` }),
      tls: stackTls(dir, { STACK_KAFKA_TLS: 'true' }),
    };
    process.once('exit', killLeftovers);
    try {
      await Promise.all([startKafka(config, jars, () => undefined), startRedis(config)]);
    } catch (error) {
      const log = join(config.logs, 'kafka.log');
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-30).join('\n') : '(no log)';
      throw new Error(`${(error as Error).message}\nlast lines of ${log}:\n${tail}`);
    }
    // The environment the stack gives the order service, parsed by the service's own config.
    order = loadOrderConfig(serviceEnv(config, 'order'));
  });

  afterAll(async () => {
    await Promise.allSettled([stopKafka(config), stopRedis(config)]);
    killLeftovers();
    process.off('exit', killLeftovers);
    rmSync(config.dir, { recursive: true, force: true });
  });

  it('given the credentials in the service config, a client creates a topic and produces to it', async () => {
    const { brokers, security } = kafkaClientOptions(order);
    assert.equal(security.sasl?.mechanism, 'scram-sha-512');
    assert.deepEqual(
      security.ssl,
      { ca: [readFileSync(config.tls!.caFile, 'utf8')] },
      'trusts the stack CA only',
    );
    const kafka = createKafka(brokers, 'credentials-spec', security);
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const topic = `credentials-${randomUUID()}`;
    await admin.connect();
    await producer.connect();
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
      await producer.send({ topic, messages: [{ key: 'k', value: 'authenticated' }] });
      const [partition] = await admin.fetchTopicOffsets(topic);
      assert.equal(partition.high, '1');
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  it('refuses a client without credentials, and one that does not trust the broker certificate', async () => {
    // Plain kafkajs without TLS or SASL and without retries: the TLS listener never answers a plaintext request.
    const anonymous = new Kafka({
      clientId: 'anonymous',
      brokers: [config.kafka.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    await assert.rejects(async () => {
      await anonymous.connect();
      await anonymous.listTopics();
    });
    await anonymous.disconnect();
    // The right password over TLS, but trusting only the system's CAs: the handshake fails before any login.
    const { brokers, security } = kafkaClientOptions(order);
    const untrusting = new Kafka({
      clientId: 'untrusting',
      brokers,
      ...security,
      ssl: true,
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    const { result } = await capturingErrors(() => untrusting.connect());
    await untrusting.disconnect();
    assert.ok(result instanceof Error, 'connect must fail');
    assert.match(
      `${result.message} ${String((result as { cause?: unknown }).cause ?? '')}`,
      /certificate|self.signed/i,
    );
  });

  it('refuses a wrong password with an authentication error, and logs neither password', async () => {
    const { brokers, security } = kafkaClientOptions(order);
    const wrong = `wrong-${randomUUID()}`;
    const admin = createKafka(brokers, 'wrong-password', {
      ssl: security.ssl,
      sasl: { mechanism: 'scram-sha-512', username: order.KAFKA_SASL_USERNAME!, password: wrong },
    }).admin();
    const { result, logged } = await capturingErrors(() => admin.connect());
    await admin.disconnect();
    assert.ok(result instanceof Error, 'connect must fail');
    assert.match(result.message, /SASL SCRAM SHA512 authentication failed/);
    assert.ok(!`${result.message}${logged}`.includes(wrong), 'the wrong password was logged');
    assert.ok(security.sasl && 'password' in security.sasl);
    assert.ok(!`${result.message}${logged}`.includes(security.sasl.password), 'the real password was logged');
  });

  it('Redis with requirepass refuses a gate without the password and serves one with REDIS_PASSWORD', async () => {
    const tenant = 'acme';
    const sku = `SASL-${randomUUID()}`;
    const anonymous = StockGate.connect(order.REDIS_URL);
    const wrong = StockGate.connect(order.REDIS_URL, { password: `wrong-${randomUUID()}` });
    const gate = StockGate.connect(order.REDIS_URL, redisAuthOf(order));
    try {
      assert.equal(await gate.ready(10_000), true, 'the gate with REDIS_PASSWORD never got ready');
      assert.deepEqual(await gate.enable(tenant, sku, 5), { outcome: 'Enabled' });
      for (const refused of [anonymous, wrong]) {
        assert.equal(await refused.ready(2_000), false);
        const take = await refused.take(tenant, `hold-${randomUUID()}`, [{ sku, quantity: 1 }]);
        assert.equal(take.outcome, 'GateUnavailable');
      }
      const take = await gate.take(tenant, `hold-${randomUUID()}`, [{ sku, quantity: 2 }]);
      assert.equal(take.outcome, 'Granted');
      assert.equal(await gate.remaining(tenant, sku), 3, 'the refused gates took nothing');
    } finally {
      await Promise.all([anonymous.close(), wrong.close(), gate.close()]);
    }
  });
});
