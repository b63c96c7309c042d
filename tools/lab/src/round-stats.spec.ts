import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { pythonDict, tally } from './round-stats';

describe('tally', () => {
  it('counts oversold and negative rounds and errors by code, as seed 003 does', () => {
    const stats = tally([
      { stock: -1, orders: 2, outcomes: ['sold', 'sold'] },
      { stock: 0, orders: 1, outcomes: ['sold', 'soldout'] },
      { stock: 0, orders: 1, outcomes: ['sold', 'err1213'] },
      { stock: 0, orders: 1, outcomes: ['err4025', 'sold'] },
    ]);
    assert.deepEqual(stats, {
      rounds: 4,
      oversold: 1,
      negative: 1,
      soldTotal: 5,
      errors: { err1213: 1, err4025: 1 },
    });
  });

  it('an empty run is all zeros', () => {
    assert.deepEqual(tally([]), { rounds: 0, oversold: 0, negative: 0, soldTotal: 0, errors: {} });
  });
});

describe('pythonDict', () => {
  it('prints {} and sorted quoted keys like the seed script', () => {
    assert.equal(pythonDict({}), '{}');
    assert.equal(pythonDict({ err3819: 299 }), "{'err3819': 299}");
    assert.equal(pythonDict({ err4025: 1, err1213: 2 }), "{'err1213': 2, 'err4025': 1}");
  });
});
