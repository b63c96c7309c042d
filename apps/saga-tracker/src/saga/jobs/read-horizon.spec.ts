import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { EndsSample, caughtUpAt } from './read-horizon';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const sample = (s: number, ends: Record<string, [number, number]>): EndsSample => ({
  at: at(s),
  ends: new Map(Object.entries(ends).map(([k, [low, high]]) => [k, { low, high }])),
});

describe('read horizon', () => {
  const samples = [
    sample(1, { 'order.created/0': [0, 10], 'payment.failed/0': [0, 2] }),
    sample(2, { 'order.created/0': [0, 15], 'payment.failed/0': [0, 2] }),
    sample(3, { 'order.created/0': [0, 20], 'payment.failed/0': [0, 3] }),
  ];

  it('is the latest instant whose end offsets the group has committed on every partition', () => {
    const committed = new Map([
      ['order.created/0', 16],
      ['payment.failed/0', 2],
    ]);
    assert.deepEqual(caughtUpAt(samples, committed), at(2));
  });

  it('is null while one partition is behind every sample', () => {
    const committed = new Map([
      ['order.created/0', 25],
      ['payment.failed/0', 1],
    ]);
    assert.equal(caughtUpAt(samples, committed), null);
  });

  it('counts a partition never committed as read from its low watermark', () => {
    const empty = [sample(5, { 'order.created/0': [7, 7], 'payment.failed/0': [0, 0] })];
    assert.deepEqual(caughtUpAt(empty, new Map([['order.created/0', -1]])), at(5));
    const unread = [sample(5, { 'order.created/0': [0, 4] })];
    assert.equal(caughtUpAt(unread, new Map()), null);
  });
});
