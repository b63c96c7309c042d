import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { formatCounts, formatMs, percentile, tally } from './stats';

describe('demo stats', () => {
  it('percentile is the nearest rank: the median of 1..10 is 5, p95 is 10, none for no values', () => {
    const values = [7, 3, 10, 1, 5, 2, 9, 4, 8, 6];

    assert.equal(percentile(values, 50), 5);
    assert.equal(percentile(values, 95), 10);
    assert.equal(percentile([42], 50), 42);
    assert.equal(percentile([], 50), undefined);
  });

  it('formats durations for people', () => {
    assert.deepEqual([840, 1_843, 12_340, 125_000, undefined].map(formatMs), [
      '840 ms',
      '1.84 s',
      '12.3 s',
      '2 min 05 s',
      'n/a',
    ]);
  });

  it('tallies labels and prints them sorted, without zeros', () => {
    assert.equal(formatCounts(tally(['SHIPPED', 'REJECTED', 'SHIPPED'])), 'REJECTED 1, SHIPPED 2');
    assert.equal(formatCounts({ PAID: 0 }), 'none');
  });
});
