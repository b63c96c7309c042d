import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadStackConfig } from '@checkout/local-stack';
import { MariaLab, MariaRun, MariaServerInfo, defaultServer } from '../src/mariadb-lab';
import { PgLabResult, runPostgresLab } from '../src/postgres-lab';
import { SEED_002_TRACE } from '../src/seed-figures';

/**
 * Whether a MariaDB version predates innodb_snapshot_isolation, which came with 10.6.18, 10.11.8, 11.0.6,
 * 11.1.5, 11.2.4 and 11.4.2 (and is in every release line after 11.4). MySQL has no such variable.
 */
function predatesSnapshotIsolation(version: string): boolean {
  if (!/mariadb/i.test(version)) return true;
  const [major, minor, patch] = version.split(/[.-]/).map(Number);
  const since: Record<string, number> = {
    '10.6': 18,
    '10.11': 8,
    '11.0': 6,
    '11.1': 5,
    '11.2': 4,
    '11.4': 2,
  };
  const first = since[`${major}.${minor}`];
  if (first !== undefined) return patch < first;
  return major < 11 || (major === 11 && minor < 4);
}

// Small, fast versions of both experiments asserting only directions, never timings. The app work (10 ms on
// PostgreSQL, 5 ms inside each MariaDB transaction) puts every read before the first write, so a buggy variant
// that did not oversell across these rounds would be a real change of behaviour, not bad luck.
const quiet = () => undefined;

describe('seed 002 on PostgreSQL 17, small: 100 buyers for 50 units', () => {
  const units = 50;
  let result: PgLabResult;

  beforeAll(async () => {
    result = await runPostgresLab(
      loadStackConfig(),
      { buyers: 100, stock: units, pool: 20, workMs: 10, expire: 10, database: 'lab_test' },
      quiet,
    );
  });

  it('read-check-write with an absolute write oversells, and the stock row hides it', () => {
    const run = result.sales.readCheckWrite;
    assert.ok(run.sold > units, `sold ${run.sold}`);
    assert.ok(run.stock.available >= 0 && run.stock.available > units - run.sold);
  });

  it('check, then decrement oversells into negative stock', () => {
    const run = result.sales.checkThenDecrement;
    assert.ok(run.sold > units, `sold ${run.sold}`);
    assert.equal(run.stock.available, units - run.sold);
  });

  it('the conditional UPDATE sells exactly the stock', () => {
    assert.equal(result.sales.conditional.sold, units);
    assert.deepEqual(result.sales.conditional.stock, { available: 0, reserved: 0 });
  });

  it('with the CHECK, the decrement fails for the surplus buyers instead of going negative', () => {
    const run = result.sales.decrementWithCheck;
    assert.equal(run.sold, units);
    assert.deepEqual(run.errors, { 'sqlstate 23514': 100 - units });
    assert.equal(run.stock.available, 0);
  });

  it('with the CHECK, the absolute write still oversells', () => {
    assert.ok(result.sales.readCheckWriteWithCheck.sold > units);
  });

  it('reservations hold exactly the stock; the release job returns the expired ones once', () => {
    assert.equal(result.reserve.sold, units);
    assert.deepEqual(result.reserve.stock, { available: 0, reserved: units });
    assert.deepEqual(result.release, [
      { rows: 1, stock: { available: 10, reserved: units - 10 } },
      { rows: 0, stock: { available: 10, reserved: units - 10 } },
    ]);
  });

  it('the payment state machine gives the seed trace line for line', () => {
    assert.deepEqual(result.trace, SEED_002_TRACE);
  });
});

describe('seed 003 on MariaDB, small: two sessions, 25 rounds per variant, 5 ms of work in the transaction', () => {
  const rounds = 25;
  let lab: MariaLab;
  let info: MariaServerInfo;
  const run = (variant: MariaRun['variant'], snapshotIsolation?: boolean) =>
    lab.run({ variant, rounds, delayMs: 5, jitterMs: 0, snapshotIsolation });

  beforeAll(async () => {
    lab = await MariaLab.open(defaultServer('checkout_lab_test'));
    info = await lab.serverInfo();
  });
  afterAll(() => lab?.close());

  it('naive read-then-decrement oversells and drives the stock negative', async () => {
    const naive = await run('naive');
    assert.ok(naive.oversold >= 1, `oversold ${naive.oversold}`);
    assert.equal(naive.negative, naive.oversold);
  });

  for (const variant of ['cond', 'update'] as const) {
    it(`${variant} never oversells and raises no error`, async () => {
      const safe = await run(variant);
      assert.equal(safe.oversold, 0);
      assert.equal(safe.negative, 0);
      assert.deepEqual(safe.errors, {});
      assert.equal(safe.soldTotal, rounds);
    });
  }

  it('forshare never oversells but deadlocks (1213)', async () => {
    const shared = await run('forshare');
    assert.equal(shared.oversold, 0);
    assert.ok((shared.errors.err1213 ?? 0) >= 1, JSON.stringify(shared.errors));
  });

  it('check never oversells; the loser gets the CHECK error (4025 on MariaDB, 3819 on MySQL)', async () => {
    const checked = await run('check');
    assert.equal(checked.oversold, 0);
    assert.equal(checked.negative, 0);
    const codes = Object.keys(checked.errors);
    assert.ok(
      codes.length === 1 && ['err4025', 'err3819'].includes(codes[0]),
      JSON.stringify(checked.errors),
    );
  });

  it('naive under innodb_snapshot_isolation=ON fails with 1020 instead of overselling', async () => {
    if (info.snapshotIsolation === null) {
      // Not a skip: a server that lacks the variable must be one released before it, else this fails.
      assert.ok(
        predatesSnapshotIsolation(info.version),
        `${info.version} should have innodb_snapshot_isolation`,
      );
      return;
    }
    const strict = await run('naive', true);
    assert.equal(strict.oversold, 0);
    assert.ok((strict.errors.err1020 ?? 0) >= 1, JSON.stringify(strict.errors));
  });
});
