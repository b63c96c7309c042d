import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { goldenEvent, scratchDatabase, waitFor } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { RecordSagaStepHandler } from '../src/saga/commands/record-step/record-step.handler';
import { SagaMetrics } from '../src/saga/saga.metrics';
import { TEST_TIMEOUTS } from './support';

/**
 * Steps of one saga arrive on several topics and are recorded by concurrent transactions: the one that commits
 * last must derive the saga's state from every step (lockSagas holds the saga row until commit).
 */
describe('two steps of one saga recorded at the same time', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let handler: RecordSagaStepHandler;
  beforeAll(async () => {
    scratch = await scratchDatabase('saga_race', MIGRATIONS, 4);
    const created = goldenEvent('order.created');
    const tenants = new TenantRegistry([{ id: created.tenantId, apiKeySha256: hashApiKey('race-key') }]);
    handler = new RecordSagaStepHandler(
      TEST_TIMEOUTS,
      new SagaMetrics(new Registry(), scratch.dataSource, tenants),
    );
    // The saga row exists and is committed: only the lock serialises the two steps that follow.
    await scratch.dataSource.transaction((tx) => handler.executeAll(tx, [created]));
  }, 60_000);
  afterAll(async () => {
    await scratch?.drop();
  });

  it('the second transaction waits for the first and counts both steps', async () => {
    const ds = scratch.dataSource;
    const first = ds.createQueryRunner();
    await first.connect();
    await first.startTransaction();
    let secondDone = false;
    try {
      await handler.executeAll(first.manager, [goldenEvent('inventory.reserved')]);
      const second = ds
        .transaction((tx) => handler.executeAll(tx, [goldenEvent('payment.succeeded')]))
        .finally(() => (secondDone = true));
      // Either the second waits on the saga row (right) or it has already committed on its own (the defect).
      await waitFor(
        'the second transaction to block on the saga row or to finish',
        async () => {
          if (secondDone) return 'done';
          const [{ n }]: { n: number }[] = await ds.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return n > 0 && 'blocked';
        },
        { timeoutMs: 20_000, intervalMs: 20 },
      );
      assert.equal(secondDone, false, 'the second transaction committed while the first held the saga');
      await first.commitTransaction();
      await second;
    } finally {
      if (first.isTransactionActive) await first.rollbackTransaction();
      await first.release();
    }
    const [saga]: { stepCount: number }[] = await ds.query(`SELECT step_count AS "stepCount" FROM saga`);
    assert.equal(saga.stepCount, 3);
  });
});
