import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { scratchDatabase } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { PaymentMetrics } from '../src/payment/payment.metrics';
import { PrunePspEventsConfig, PrunePspEventsJob } from '../src/payment/jobs/prune-psp-events.job';

const DAY = 86_400_000;
const config: PrunePspEventsConfig = {
  PAYMENT_PSP_EVENT_RETENTION_MS: 30 * DAY,
  PAYMENT_PSP_EVENT_PRUNE_INTERVAL_MS: 3_600_000,
  PAYMENT_PSP_EVENT_PRUNE_BATCH: 1_000,
  PAYMENT_PSP_EVENT_PRUNE_MAX_BATCHES: 2,
};

/** Inserts `n` dedupe rows received `ageMs` ago, ids prefixed. */
const seed = (ds: DataSource, prefix: string, n: number, ageMs: number) =>
  ds.query(
    `INSERT INTO psp_event (event_id, tenant_id, type, charge_id, outcome, received_at)
     SELECT $1 || i, 'acme', 'charge.succeeded', 'ch_' || i, 'applied', now() - $3 * interval '1 millisecond'
       FROM generate_series(1, $2) AS i`,
    [prefix, n, ageMs],
  );

const count = async (ds: DataSource, prefix: string): Promise<number> =>
  (await ds.query(`SELECT count(*)::int AS n FROM psp_event WHERE starts_with(event_id, $1)`, [prefix]))[0].n;

describe('payment: PSP event ids are pruned past their retention, in bounded batches', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let job: PrunePspEventsJob;
  let registry: Registry;

  beforeAll(async () => {
    scratch = await scratchDatabase('payment_retention', MIGRATIONS, 2);
    registry = new Registry();
    job = new PrunePspEventsJob(
      config,
      scratch.dataSource,
      new PaymentMetrics(registry),
      new PinoLogger({ pinoHttp: { level: 'silent' } }),
    );
  });

  afterAll(() => scratch.drop());

  it('given 2,500 rows past the retention and younger ones, each pass deletes at most 2 x 1,000, oldest first', async () => {
    const ds = scratch.dataSource;
    await seed(ds, 'oldest_', 600, 60 * DAY);
    await seed(ds, 'old_', 1_900, 31 * DAY);
    await seed(ds, 'recent_', 10, 29 * DAY);
    await seed(ds, 'fresh_', 10, 0);

    assert.equal(await job.prune(), 2_000, 'the first pass stops at its batch limit');
    assert.equal(await count(ds, 'oldest_'), 0, 'the oldest went first');
    assert.equal(await count(ds, 'old_'), 500);
    assert.equal(await job.prune(), 500);
    assert.equal(await job.prune(), 0, 'nothing left past the retention');
    assert.equal(await count(ds, 'old_'), 0);
    assert.equal(await count(ds, 'recent_'), 10, 'rows inside the retention stay');
    assert.equal(await count(ds, 'fresh_'), 10);
    assert.match(await registry.metrics(), /payment_psp_events_pruned_total 2500/);
  });
});
