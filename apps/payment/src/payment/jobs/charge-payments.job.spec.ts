import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { PaymentConfig } from '../../config/payment.config';
import { ChargePaymentHandler } from '../commands/charge-payment/charge-payment.handler';
import { MovePaymentHandler } from '../commands/move-payment/move-payment.handler';
import { PaymentAttempt } from '../database/payment.repository';
import { ChargePaymentsJob } from './charge-payments.job';
import { ReconcilePaymentsJob } from './reconcile-payments.job';

describe('ChargePaymentsJob tells reconciliation when attempts start to await the PSP', () => {
  /** A worker whose claims answer `claims` in turn; counts what it tells reconciliation. */
  function worker(claims: number[]) {
    let told = 0;
    let charged = 0;
    const job = new ChargePaymentsJob(
      {
        PAYMENT_CHARGE_CONCURRENCY: 4,
        PAYMENT_CHARGE_POLL_MS: 60_000,
        PAYMENT_CHARGE_IDLE_POLL_MS: 60_000,
      } as PaymentConfig,
      {} as DataSource,
      {
        execute: () => {
          charged += 1;
          return Promise.resolve({ kind: 'ok' });
        },
      } as unknown as ChargePaymentHandler,
      {
        claimNew: () =>
          Promise.resolve(
            Array.from({ length: claims.shift() ?? 0 }, (_, i) => ({ id: `a${i}` }) as PaymentAttempt),
          ),
      } as unknown as MovePaymentHandler,
      { attemptAwaitsPsp: () => (told += 1) } as unknown as ReconcilePaymentsJob,
      { setContext: () => undefined, info: () => undefined, error: () => undefined } as unknown as PinoLogger,
    );
    return { job, told: () => told, charged: () => charged };
  }

  it('a round that claimed attempts (now pending) schedules their reconciliation; an empty one does not', async () => {
    const w = worker([2, 0, 0, 0]);
    w.job.onApplicationBootstrap();
    await w.job.beforeApplicationShutdown();
    assert.equal(w.charged(), 2);
    assert.equal(w.told(), 1);
  });

  it('nothing claimed: reconciliation is not told', async () => {
    const w = worker([0]);
    w.job.onApplicationBootstrap();
    await w.job.beforeApplicationShutdown();
    assert.equal(w.told(), 0);
  });
});
