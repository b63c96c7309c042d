import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { PAYMENT_STATES } from '@checkout/contracts';
import {
  ALLOWED_FROM,
  AWAITING_PSP_STATES,
  CAPTURED_STATES,
  PaymentState,
  canTransition,
  replay,
} from './payment-state';

describe('payment state machine', () => {
  it("replays the seed's trace: pending, unknown, webhook succeeded, duplicate, late failed, refunded", () => {
    const { state, outcomes } = replay('created', [
      'pending',
      'unknown',
      'succeeded',
      'succeeded',
      'failed',
      'refunded',
    ]);
    assert.deepEqual(outcomes, ['applied', 'applied', 'applied', 'ignored', 'ignored', 'applied']);
    assert.equal(state, 'refunded');
  });

  it('never treats unknown as an end: only succeeded or failed leave it', () => {
    const exits = PAYMENT_STATES.filter((to) => canTransition('unknown', to));
    assert.deepEqual(exits, ['succeeded', 'failed']);
  });

  it('never goes backwards from succeeded, failed or refunded', () => {
    for (const to of PAYMENT_STATES) {
      assert.equal(canTransition('failed', to), false, `failed -> ${to}`);
      assert.equal(canTransition('refunded', to), false, `refunded -> ${to}`);
      assert.equal(canTransition('succeeded', to), to === 'refunded', `succeeded -> ${to}`);
    }
  });

  it('applies every transition at most once (a repeat is ignored)', () => {
    for (const to of PAYMENT_STATES) {
      for (const from of ALLOWED_FROM[to]) {
        assert.deepEqual(replay(from, [to, to]).outcomes, ['applied', 'ignored'], `${from} -> ${to} twice`);
      }
    }
  });

  it('fails an attempt never sent to the PSP (its order was cancelled first), but never succeeds one', () => {
    assert.deepEqual(replay('created', ['failed', 'pending']), {
      state: 'failed',
      outcomes: ['applied', 'ignored'],
    });
    assert.equal(canTransition('created', 'succeeded'), false);
  });

  it('refunds only a succeeded payment', () => {
    assert.deepEqual(ALLOWED_FROM.refunded, ['succeeded']);
    assert.equal(replay('unknown', ['refunded']).state, 'unknown');
  });

  it('reconciles exactly the states a PSP answer settles either way (never created: the PSP was not asked)', () => {
    const settledByAnswer = PAYMENT_STATES.filter(
      (from) => canTransition(from, 'succeeded') && canTransition(from, 'failed'),
    );
    assert.deepEqual([...AWAITING_PSP_STATES].sort(), settledByAnswer.sort());
  });

  it('counts as captured succeeded and every state it leads to', () => {
    const reachable = new Set<PaymentState>(['succeeded']);
    for (let grew = true; grew;) {
      grew = false;
      for (const to of PAYMENT_STATES)
        if (!reachable.has(to) && [...reachable].some((from) => canTransition(from, to))) {
          reachable.add(to);
          grew = true;
        }
    }
    assert.deepEqual([...CAPTURED_STATES].sort(), [...reachable].sort());
  });
});
