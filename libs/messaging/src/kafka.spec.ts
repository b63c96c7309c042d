import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { kafkaSecurityFromEnv } from './kafka';

describe('kafkaSecurityFromEnv (tools without a service config: the DLQ replay)', () => {
  it('given no variables, is a plain client', () => {
    assert.deepEqual(kafkaSecurityFromEnv({}), {});
  });

  it('given a mechanism and credentials, is a SASL client', () => {
    assert.deepEqual(
      kafkaSecurityFromEnv({
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'ops',
        KAFKA_SASL_PASSWORD: 'p',
        KAFKA_SSL: 'true',
      }),
      { ssl: true, sasl: { mechanism: 'plain', username: 'ops', password: 'p' } },
    );
  });

  it('throws naming the missing variable, never the password', () => {
    assert.throws(
      () => kafkaSecurityFromEnv({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_PASSWORD: 'hunter2' }),
      (e: unknown) =>
        e instanceof Error && /KAFKA_SASL_USERNAME/.test(e.message) && !e.message.includes('hunter2'),
    );
  });
});
