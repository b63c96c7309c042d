import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { WaitStep } from './saga-state';
import { TEST_TIMEOUTS } from '../../../test/timeouts';
import { stepTimeouts, stuckVerdict } from './stuck-policy';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const timeouts = TEST_TIMEOUTS;
const waitingFor = (step: WaitStep, sinceMs: number) => ({
  step,
  service: 'payment' as const,
  compensation: false,
  since: at(sinceMs),
});

describe('stuck policy', () => {
  it('given a saga waiting for payment past its step timeout, it is stuck by step timeout', () => {
    const state = { terminal: false, startedAt: at(0), waitingFor: waitingFor('payment', 1_000) };
    assert.deepEqual(stuckVerdict(state, at(10_999), timeouts), {
      stuck: false,
      reason: null,
      waitedMs: 9_999,
      deadline: at(11_000),
    });
    const verdict = stuckVerdict(state, at(11_000), timeouts);
    assert.equal(verdict.stuck, true);
    assert.equal(verdict.reason, 'step-timeout');
    assert.equal(verdict.waitedMs, 10_000);
  });

  it('given a saga that keeps moving but never ends, it is stuck by the overall timeout', () => {
    const state = { terminal: false, startedAt: at(0), waitingFor: waitingFor('refund', 55_000) };
    assert.equal(stuckVerdict(state, at(59_999), timeouts).stuck, false);
    const verdict = stuckVerdict(state, at(60_000), timeouts);
    assert.equal(verdict.stuck, true);
    assert.equal(verdict.reason, 'overall-timeout');
  });

  it('never calls an ended saga stuck, however old', () => {
    const verdict = stuckVerdict({ terminal: true, startedAt: at(0), waitingFor: null }, at(1e9), timeouts);
    assert.deepEqual(verdict, { stuck: false, reason: null, waitedMs: 0, deadline: null });
  });

  it('requires a positive timeout for every wait step', () => {
    assert.throws(() => stepTimeouts({ ...timeouts.steps, refund: 0 }), /refund/);
    assert.deepEqual(stepTimeouts(timeouts.steps), timeouts.steps);
  });
});
