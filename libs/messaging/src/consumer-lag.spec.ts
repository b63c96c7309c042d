import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { topicDepth, topicLag } from './consumer-lag';

describe('consumer lag arithmetic', () => {
  const ends = [
    { partition: 0, low: '0', high: '10' },
    { partition: 1, low: '4', high: '9' },
    { partition: 2, low: '0', high: '0' },
  ];

  it('is the high watermark minus the committed offset, summed over partitions', () => {
    const lag = topicLag(ends, [
      { partition: 0, offset: '7' },
      { partition: 1, offset: '9' },
      { partition: 2, offset: '0' },
    ]);
    assert.equal(lag, 3);
  });

  it('counts a partition the group never committed from its low watermark', () => {
    assert.equal(topicLag(ends, [{ partition: 0, offset: '-1' }]), 10 + 5);
  });

  it('does not count messages already deleted by retention (commit below the low watermark)', () => {
    assert.equal(topicLag([{ partition: 0, low: '50', high: '60' }], [{ partition: 0, offset: '20' }]), 10);
  });

  it('a dead-letter topic holds high minus low', () => {
    assert.equal(topicDepth(ends), 10 + 5);
  });
});
