import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ConfigError } from '@checkout/service-kit';
import { loadPaymentConfig } from './payment.config';

const env = {
  SERVICE_NAME: 'payment',
  PORT: '3003',
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/payment_svc',
  PSP_URL: 'http://127.0.0.1:4010',
};
const DAY = 86_400_000;

describe('payment config: PSP event retention', () => {
  it('keeps dedupe rows 30 days by default, past the 3-day redelivery window', () => {
    const c = loadPaymentConfig(env);
    assert.equal(c.PAYMENT_PSP_EVENT_RETENTION_MS, 30 * DAY);
    assert.equal(c.PAYMENT_PSP_REDELIVERY_WINDOW_MS, 3 * DAY);
  });

  it('refuses a retention that does not outlast redelivery window + signature tolerance', () => {
    const boundary = String(3 * DAY + 300_000);
    assert.throws(
      () => loadPaymentConfig({ ...env, PAYMENT_PSP_EVENT_RETENTION_MS: boundary }),
      (e: unknown) => e instanceof ConfigError && /PAYMENT_PSP_EVENT_RETENTION_MS/.test(e.message),
    );
    assert.throws(
      () =>
        loadPaymentConfig({
          ...env,
          PAYMENT_PSP_REDELIVERY_WINDOW_MS: String(40 * DAY),
        }),
      ConfigError,
    );
    const ok = loadPaymentConfig({ ...env, PAYMENT_PSP_EVENT_RETENTION_MS: String(3 * DAY + 300_001) });
    assert.equal(ok.PAYMENT_PSP_EVENT_RETENTION_MS, 3 * DAY + 300_001);
  });
});
