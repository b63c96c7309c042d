import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import type { MariaRun } from './mariadb-lab';
import type { PgLabResult, SaleRun } from './postgres-lab';
import { mariaLine, mariaVerdict, postgresRows, saleText, seedFor } from './report';
import { SEED_002_TRACE } from './seed-figures';

const sale = (sold: number, available: number, errors: Record<string, number> = {}): SaleRun => ({
  sold,
  refused: 0,
  errors,
  stock: { available, reserved: 0 },
});

const run = (over: Partial<MariaRun>): MariaRun => ({
  variant: 'naive',
  rounds: 300,
  delayMs: 0,
  jitterMs: 0,
  oversold: 0,
  negative: 0,
  soldTotal: 300,
  errors: {},
  msPerRound: 1.25,
  messages: {},
  ...over,
});

describe('saleText', () => {
  it("prints seed 002's lines, with the remark only when lost updates hide an oversell", () => {
    assert.equal(
      saleText(sale(540, 499), 500),
      'sold 540 of 500, stock now { available: 499, reserved: 0 } (lost updates hide the oversell)',
    );
    assert.equal(saleText(sale(540, -40), 500), 'sold 540 of 500, stock now { available: -40, reserved: 0 }');
    assert.equal(
      saleText(sale(500, 0, { 'sqlstate 23514': 40 }), 500),
      'sold 500 of 500, 40 failed (sqlstate 23514), stock now { available: 0, reserved: 0 }',
    );
  });
});

describe('postgresRows', () => {
  const result: PgLabResult = {
    server: '17.10',
    params: { buyers: 540, stock: 500, pool: 50, workMs: 5, expire: 30, database: 'lab' },
    sales: {
      readCheckWrite: sale(540, 497),
      checkThenDecrement: sale(540, -40),
      conditional: sale(500, 0),
      decrementWithCheck: sale(500, 0, { 'sqlstate 23514': 40 }),
      readCheckWriteWithCheck: sale(540, 499),
    },
    reserve: { sold: 500, refused: 40, errors: {}, stock: { available: 0, reserved: 500 } },
    release: [
      { rows: 1, stock: { available: 30, reserved: 470 } },
      { rows: 0, stock: { available: 30, reserved: 470 } },
    ],
    trace: [...SEED_002_TRACE],
  };

  it('marks exact matches, differences and claims', () => {
    const verdicts = Object.fromEntries(postgresRows(result).map((row) => [row.label, row.verdict]));
    assert.equal(verdicts['read-check-write'], 'differs');
    assert.equal(verdicts['check, then decrement'], 'same');
    assert.equal(verdicts['decrement + CHECK'], 'claim holds');
    assert.equal(verdicts['release again'], 'claim holds');
    assert.equal(verdicts['payment step 6'], 'same');
  });

  it("does not compare exact figures when the parameters are not the seed's", () => {
    const rows = postgresRows({ ...result, params: { ...result.params, buyers: 60 } });
    assert.equal(rows[1].verdict, 'n/a (other parameters)');
  });
});

describe('MariaDB rows', () => {
  it("prints the seed's variant= line format", () => {
    assert.equal(
      mariaLine(run({ variant: 'forshare', errors: { err1213: 298 } })),
      'variant=forshare delay=0ms jitter=0ms rounds=300 oversold_rounds=0 negative_stock_rounds=0 ' +
        "errors={'err1213': 298} ms_per_round=1.3",
    );
  });

  it('compares directions and treats MariaDB 4025 as MySQL 3819', () => {
    const check = run({ variant: 'check', errors: { err4025: 120 } });
    assert.equal(mariaVerdict(check, seedFor(check)), 'same direction');
    const naive = run({ variant: 'naive', jitterMs: 2, oversold: 0 });
    assert.equal(mariaVerdict(naive, seedFor(naive)), 'DIFFERS in oversold, negative stock');
    const extra = run({ snapshotIsolation: true, errors: { err1020: 5 } });
    assert.equal(seedFor(extra), undefined);
    assert.equal(mariaVerdict(extra, undefined), 'no seed figure');
  });
});
