import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { MAX_RSS_GROWTH, rssGrowth } from './soak';

describe('rssGrowth (soak: RSS may not grow beyond 20%)', () => {
  it('given a flat RSS after warm-up, reports no growth', () => {
    const growth = rssGrowth({ order: [50, 100, 100, 100, 100, 100, 100, 100, 100, 100] });
    assert.equal(growth.order, 0);
  });

  it('given the start-up climb only, measures from the warmed-up samples, not the first one', () => {
    const growth = rssGrowth({ order: [10, 90, 100, 100, 100, 100, 100, 100, 100, 105] });
    assert.ok(growth.order <= MAX_RSS_GROWTH, `growth ${growth.order}`);
  });

  it('given a steady climb, reports it above the limit', () => {
    const growth = rssGrowth({ payment: [100, 100, 100, 110, 120, 130, 140, 150, 160, 170] });
    assert.ok(growth.payment > MAX_RSS_GROWTH, `growth ${growth.payment}`);
  });

  it('given too few samples to tell, leaves the app out', () => {
    assert.deepEqual(rssGrowth({ order: [1, 2, 3] }), {});
  });
});
