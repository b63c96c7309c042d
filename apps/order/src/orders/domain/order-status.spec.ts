import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ORDER_STATUSES, TERMINAL_ORDER_STATUSES } from '@checkout/contracts';
import {
  OrderStatus,
  canMovePayment,
  canTransition,
  customerMayCancel,
  refundIfCharged,
} from './order-status';

const RANK: Record<OrderStatus, number> = {
  PENDING: 0,
  AWAITING_PAYMENT: 1,
  REJECTED: 2,
  CANCELLED: 2,
  BACKORDERED: 2,
  // After BACKORDERED: a restock fills the backorder and the order is paid.
  PAID: 2.5,
  SHIPPED: 3,
  REFUNDED: 4,
};

describe('order state machine', () => {
  it('only ever moves forward', () => {
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        if (canTransition(from, to)) assert.ok(RANK[to] > RANK[from], `${from} -> ${to} goes backwards`);
      }
    }
  });

  it('never re-enters PENDING and never leaves REJECTED or REFUNDED', () => {
    for (const s of ORDER_STATUSES) {
      assert.equal(canTransition(s, 'PENDING'), false);
      assert.equal(canTransition('REJECTED', s), false);
      assert.equal(canTransition('REFUNDED', s), false);
    }
  });

  it('follows the happy path PENDING -> AWAITING_PAYMENT -> PAID -> SHIPPED', () => {
    assert.ok(canTransition('PENDING', 'AWAITING_PAYMENT'));
    assert.ok(canTransition('AWAITING_PAYMENT', 'PAID'));
    assert.ok(canTransition('PAID', 'SHIPPED'));
    assert.equal(canTransition('PAID', 'AWAITING_PAYMENT'), false, 'a late inventory.reserved is ignored');
    assert.equal(canTransition('PAID', 'CANCELLED'), false, 'a stale payment.failed is ignored');
  });

  it('keeps every terminal status terminal except for a refund, and a filled backorder that ships', () => {
    for (const t of TERMINAL_ORDER_STATUSES) {
      for (const s of ORDER_STATUSES)
        if (canTransition(t, s))
          assert.ok(
            s === 'REFUNDED' || (t === 'BACKORDERED' && (s === 'PAID' || s === 'SHIPPED')),
            `${t} -> ${s}`,
          );
    }
    assert.ok(canTransition('BACKORDERED', 'PAID'), 'a restock filled the backorder');
  });

  it('mirrors payment forward only: succeeded never becomes failed, refunded is final', () => {
    assert.ok(canMovePayment('unknown', 'succeeded'));
    assert.equal(canMovePayment('succeeded', 'failed'), false);
    assert.equal(canMovePayment('failed', 'succeeded'), false);
    assert.equal(canMovePayment('refunded', 'succeeded'), false);
    assert.ok(canMovePayment(null, 'refunded'), 'refunded may overtake succeeded');
  });

  it('lets a customer cancel before the payment succeeded, refunding whatever may have been charged', () => {
    assert.ok(customerMayCancel('PENDING', null));
    assert.ok(customerMayCancel('AWAITING_PAYMENT', 'unknown'));
    assert.equal(customerMayCancel('AWAITING_PAYMENT', 'succeeded'), false);
    assert.equal(customerMayCancel('PAID', 'succeeded'), false);
    assert.equal(refundIfCharged('unknown'), true);
    assert.equal(refundIfCharged(null), true);
    assert.equal(refundIfCharged('failed'), false);
  });
});
