import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { VARIANTS, parseOptions } from './options';

describe('parseOptions', () => {
  it("defaults to the seeds' parameters", () => {
    const options = parseOptions([]);
    assert.equal(options.db, 'both');
    assert.equal(options.buyers, 540);
    assert.equal(options.stock, 500);
    assert.equal(options.pool, 50);
    assert.equal(options.work, 5);
    assert.equal(options.rounds, 300);
    assert.deepEqual(options.jitter, [0, 2]);
    assert.deepEqual(options.variants, [...VARIANTS]);
    assert.equal(options.waitRounds, 40);
    assert.equal(options.waitDelay, 50);
    assert.equal(options.snapshotIsolation, true);
    assert.equal(options.json, false);
  });

  it('reads every flag', () => {
    const options = parseOptions([
      '--db=mariadb',
      '--json',
      '--rounds',
      '20',
      '--jitter',
      '0, 1.5,20',
      '--variants',
      'naive,check',
      '--buyers=60',
      '--no-snapshot-isolation',
      '--mariadb-database',
      'lab_x',
    ]);
    assert.equal(options.db, 'mariadb');
    assert.equal(options.json, true);
    assert.equal(options.rounds, 20);
    assert.deepEqual(options.jitter, [0, 1.5, 20]);
    assert.deepEqual(options.variants, ['naive', 'check']);
    assert.equal(options.buyers, 60);
    assert.equal(options.snapshotIsolation, false);
    assert.equal(options.mariadbDatabase, 'lab_x');
  });

  it('rejects unknown flags, bad values and unsafe database names', () => {
    assert.throws(() => parseOptions(['--nope']));
    assert.throws(() => parseOptions(['--rounds', '0']), /--rounds/);
    assert.throws(() => parseOptions(['--variants', 'naive,optimistic']), /--variants/);
    assert.throws(() => parseOptions(['--jitter', 'x']), /--jitter/);
    assert.throws(() => parseOptions(['--pg-database', 'lab"; DROP']), /--pg-database/);
  });
});
