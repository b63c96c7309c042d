import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SAGA_TOPICS } from '@checkout/contracts';
import { OUTCOME_OF, STEP_OUTCOMES, factsOf, serviceOf, stepDetail, traceIdOf } from './saga-step';

describe('saga step classification', () => {
  it('classifies every event of the contracts registry, with a known outcome and a saga service', () => {
    for (const type of SAGA_TOPICS) {
      assert.ok(STEP_OUTCOMES.includes(OUTCOME_OF[type]), `${type} has an outcome class`);
      assert.ok(['order', 'inventory', 'payment', 'fulfillment'].includes(serviceOf(type)));
    }
  });

  it('marks the undoing steps as compensations and the refusals as failures', () => {
    for (const t of [
      'inventory.released',
      'payment.refunded',
      'order.cancelled',
      'fulfillment.shipment-cancelled',
    ] as const)
      assert.equal(OUTCOME_OF[t], 'compensation', t);
    for (const t of [
      'inventory.rejected',
      'payment.failed',
      'inventory.unavailable-after-payment',
      'fulfillment.shipment-failed',
    ] as const)
      assert.equal(OUTCOME_OF[t], 'failure', t);
    assert.equal(OUTCOME_OF['fulfillment.shipment-created'], 'terminal');
    assert.equal(OUTCOME_OF['inventory.reserved'], 'progress');
  });

  it('names the producing service by the type prefix', () => {
    assert.equal(serviceOf('inventory.unavailable-after-payment'), 'inventory');
    assert.equal(serviceOf('fulfillment.shipment-created'), 'fulfillment');
    assert.equal(serviceOf('order.paid'), 'order');
  });

  it('reads the trace id of a W3C traceparent and refuses anything else', () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    assert.equal(traceIdOf(`00-${trace}-00f067aa0ba902b7-01`), trace);
    assert.equal(traceIdOf(null), null);
    assert.equal(traceIdOf('garbage'), null);
    assert.equal(traceIdOf(`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`), null, 'the all-zero id is invalid');
  });

  it('keeps only non-personal facts of a payload and says them in one line', () => {
    const facts = factsOf({
      orderId: 'x',
      customerId: 'alice',
      paymentToken: 'tok_decline',
      amount: 100,
      reason: 'card_declined',
      source: 'response',
    });
    assert.deepEqual(facts, { reason: 'card_declined', source: 'response' });
    assert.equal(stepDetail(facts), 'card_declined, via response');
    assert.equal(
      stepDetail(factsOf({ reason: 'insufficient_stock', shortSkus: ['A', 'B'] })),
      'insufficient_stock, short: A, B',
    );
    assert.equal(stepDetail(factsOf({ reReserved: false })), null);
  });
});
