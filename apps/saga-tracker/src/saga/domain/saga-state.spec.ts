import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventType } from '@checkout/contracts';
import { OUTCOME_OF, StepFacts, serviceOf } from './saga-step';
import { SagaStep, deriveSagaState, orderSteps } from './saga-state';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');

/** A saga told as a list of steps, each caused by the previous one unless `cause` says otherwise. */
function saga(...spec: [type: EventType, atMs: number, facts?: StepFacts, cause?: number][]): SagaStep[] {
  const steps: SagaStep[] = [];
  spec.forEach(([type, atMs, facts = {}, cause], i) => {
    const causeIndex = cause ?? i - 1;
    steps.push({
      eventId: randomUUID(),
      type,
      service: serviceOf(type),
      occurredAt: new Date(T0 + atMs),
      recordedAt: new Date(T0 + atMs + 5),
      causationId: causeIndex >= 0 ? steps[causeIndex].eventId : null,
      traceparent: null,
      outcome: OUTCOME_OF[type],
      facts,
    });
  });
  return steps;
}

const shuffled = <T>(xs: T[]): T[] => [...xs].reverse();

type Told = Parameters<typeof saga>[number];
/** The order accepted and its stock held. */
const RESERVED: Told[] = [
  ['order.created', 0],
  ['inventory.reserved', 100],
];
/** The hold expired at 60 s and the money came by webhook at 70 s. */
const PAID_AFTER_EXPIRY: Told[] = [
  ...RESERVED,
  ['inventory.released', 60_100, { reason: 'expired' }],
  ['payment.succeeded', 70_000, { source: 'webhook' }, 1],
];
/** The customer cancelled at 2 s, before any money; the hold was released. */
const CANCELLED_BEFORE_MONEY: Told[] = [
  ...RESERVED,
  ['order.cancelled', 2_000, { reason: 'customer_request', refundIfCharged: true }],
  ['inventory.released', 2_100, { reason: 'order_cancelled' }],
];
/** Paid: the money, the stock committed, order.paid. */
const PAID: Told[] = [
  ...RESERVED,
  ['payment.succeeded', 300],
  ['inventory.committed', 400],
  ['order.paid', 500],
];

describe('saga state', () => {
  it('given the happy path, the saga is SHIPPED and ended at the shipment', () => {
    const steps = saga(...PAID, ['fulfillment.shipment-created', 1300]);
    const state = deriveSagaState(steps);
    assert.equal(state.status, 'SHIPPED');
    assert.equal(state.terminal, true);
    assert.equal(state.waitingFor, null);
    assert.deepEqual(state.terminalAt, new Date(T0 + 1300));
    assert.equal(state.lastStep.type, 'fulfillment.shipment-created');
    assert.equal(state.compensated, false);
    assert.equal(state.started, true);
  });

  it('waits for the service whose step is due, since the step that made it due', () => {
    const steps = saga(['order.created', 0]);
    assert.deepEqual(deriveSagaState(steps).waitingFor, {
      step: 'reservation',
      service: 'inventory',
      compensation: false,
      since: new Date(T0),
    });
    const reserved = saga(['order.created', 0], ['inventory.reserved', 200]);
    const state = deriveSagaState(reserved);
    assert.equal(state.status, 'AWAITING_PAYMENT');
    assert.equal(state.waitingFor?.step, 'payment');
    assert.deepEqual(state.waitingFor?.since, new Date(T0 + 200));
    const paid = saga(...PAID);
    assert.equal(deriveSagaState(paid).status, 'PAID');
    assert.equal(deriveSagaState(paid).waitingFor?.step, 'shipment');
    assert.equal(deriveSagaState(paid).waitingFor?.service, 'fulfillment');
    assert.equal(deriveSagaState(paid.slice(0, 3)).waitingFor?.step, 'stock-commit');
    assert.equal(deriveSagaState(paid.slice(0, 4)).waitingFor?.step, 'order-paid');
  });

  it('given a decline, the saga is CANCELLED but ends only when the stock is released', () => {
    const steps = saga(
      ...RESERVED,
      ['payment.failed', 300, { reason: 'card_declined' }],
      ['order.cancelled', 400, { reason: 'payment_failed', refundIfCharged: false }],
      ['inventory.released', 450, { reason: 'payment_failed' }, 2],
    );
    const declined = deriveSagaState(steps.slice(0, 3));
    assert.equal(declined.status, 'CANCELLED');
    assert.equal(declined.waitingFor?.step, 'order-cancel', 'the order has to announce the cancellation');
    assert.equal(deriveSagaState([...steps.slice(0, 3), steps[4]]).terminal, false);
    const before = deriveSagaState(steps.slice(0, 4));
    assert.equal(before.status, 'CANCELLED');
    assert.equal(before.terminal, false);
    assert.equal(before.waitingFor?.step, 'stock-release');
    assert.equal(before.waitingFor?.compensation, true);
    const after = deriveSagaState(steps);
    assert.equal(after.terminal, true);
    assert.equal(after.compensated, true);
    assert.deepEqual(after.terminalAt, new Date(T0 + 450));
  });

  it('given no stock, the saga is REJECTED and has ended', () => {
    const state = deriveSagaState(saga(['order.created', 0], ['inventory.rejected', 50]));
    assert.equal(state.status, 'REJECTED');
    assert.equal(state.terminal, true);
  });

  it('given money for an order that cannot be served, it waits for the refund, then is REFUNDED', () => {
    const steps = saga(
      ...PAID_AFTER_EXPIRY,
      ['inventory.unavailable-after-payment', 70_100],
      ['payment.refunded', 70_500],
    );
    const waiting = deriveSagaState(steps.slice(0, 5));
    assert.equal(waiting.status, 'AWAITING_PAYMENT');
    assert.equal(waiting.waitingFor?.step, 'refund');
    assert.equal(waiting.waitingFor?.service, 'payment');
    const done = deriveSagaState(steps);
    assert.equal(done.status, 'REFUNDED');
    assert.equal(done.terminal, true);
  });

  it('given money after the reservation expired, waits for inventory to commit or refuse the stock', () => {
    const steps = saga(...PAID_AFTER_EXPIRY);
    const state = deriveSagaState(steps);
    assert.equal(state.waitingFor?.step, 'stock-commit');
    assert.deepEqual(state.waitingFor?.since, new Date(T0 + 70_000));
  });

  it('given a customer cancel while the charge was unknown and money later, waits for that refund', () => {
    const steps = saga(...CANCELLED_BEFORE_MONEY);
    const cancelled = deriveSagaState(steps);
    assert.equal(cancelled.status, 'CANCELLED');
    assert.equal(cancelled.terminal, true, 'nothing was charged (yet): the order has ended');
    const charged = saga(...CANCELLED_BEFORE_MONEY, ['payment.succeeded', 5_000, { source: 'webhook' }, 1]);
    const late = deriveSagaState(charged);
    assert.equal(late.status, 'CANCELLED', 'a cancelled order never becomes PAID');
    assert.equal(late.terminal, false);
    assert.equal(late.waitingFor?.step, 'refund');
  });

  it('given a shipment failure, waits for the refund and ends REFUNDED', () => {
    const steps = saga(
      ...PAID,
      ['fulfillment.shipment-failed', 600, { reason: 'carrier refused' }],
      ['payment.refunded', 900],
    );
    const failed = deriveSagaState(steps.slice(0, 6));
    assert.equal(failed.status, 'PAID');
    assert.equal(failed.waitingFor?.step, 'refund');
    const refunded = deriveSagaState(steps);
    assert.equal(refunded.status, 'REFUNDED');
    assert.equal(refunded.terminal, true);
  });

  it('derives the same state whatever order the steps arrive in, and ignores duplicates', () => {
    const steps = saga(...PAID, ['fulfillment.shipment-created', 1300]);
    const expected = deriveSagaState(steps);
    const messy = [...shuffled(steps), steps[2], steps[0]];
    assert.deepEqual(deriveSagaState(messy), expected);
    assert.equal(expected.stepCount, 6);
    // A late, duplicated-by-content reservation cannot move a paid order back.
    const late = saga(['order.created', 0], ['inventory.reserved', 100], ['order.paid', 200]);
    late.push({ ...late[1], eventId: randomUUID(), occurredAt: new Date(T0 + 300) });
    assert.equal(deriveSagaState(late).status, 'PAID');
  });

  it('puts a step after its cause even when its clock is behind', () => {
    const steps = saga(['order.created', 1_000], ['inventory.reserved', 900], ['payment.succeeded', 950]);
    assert.deepEqual(
      orderSteps(shuffled(steps)).map((s) => s.type),
      ['order.created', 'inventory.reserved', 'payment.succeeded'],
    );
  });

  it('knows a saga whose order.created has not arrived yet', () => {
    const steps = saga(...RESERVED);
    const state = deriveSagaState([steps[1]]);
    assert.equal(state.started, false);
    assert.equal(state.complete, false);
    assert.equal(state.status, 'AWAITING_PAYMENT');
    assert.deepEqual(state.startedAt, new Date(T0 + 100));
  });

  it('never calls a saga ended while a step it has seen waits for its cause to arrive', () => {
    const steps = saga(
      ...RESERVED,
      ['payment.failed', 300, { reason: 'card_declined' }],
      ['order.cancelled', 400, { reason: 'payment_failed', refundIfCharged: false }],
      ['inventory.released', 450, { reason: 'payment_failed' }, 2],
    );
    // The order's cancellation was consumed first, before anything else of the saga.
    const first = deriveSagaState([steps[3]]);
    assert.equal(first.status, 'CANCELLED');
    assert.equal(first.terminal, false);
    assert.equal(first.missingCauses, 1);
    const withoutDecline = deriveSagaState([steps[0], steps[1], steps[3], steps[4]]);
    assert.equal(
      withoutDecline.terminal,
      false,
      'payment.failed, the cause of two steps, is still in flight',
    );
    assert.equal(withoutDecline.missingCauses, 2);
    const all = deriveSagaState(shuffled(steps));
    assert.equal(all.terminal, true);
    assert.equal(all.complete, true);
  });
});
