import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { REFUND_STATES, canMoveRefund } from './refund-state';

describe('refund state machine', () => {
  it('completes an open refund on the PSP word, whether it was pending or parked', () => {
    assert.equal(canMoveRefund('pending', 'succeeded'), true);
    assert.equal(canMoveRefund('refund_failed', 'succeeded'), true);
  });

  it('parks only a pending refund, and only an operator sends a parked one back', () => {
    assert.equal(canMoveRefund('pending', 'refund_failed'), true);
    assert.equal(canMoveRefund('refund_failed', 'pending'), true);
    assert.equal(canMoveRefund('succeeded', 'refund_failed'), false, 'a late failure after success');
  });

  it('never leaves succeeded and never re-enters the state it is in', () => {
    for (const to of REFUND_STATES) {
      assert.equal(canMoveRefund('succeeded', to), false, `succeeded -> ${to}`);
      assert.equal(canMoveRefund(to, to), false, `${to} -> ${to}`);
    }
  });
});
