import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DeliveryInput, checkDelivery } from './delivery';

const saga = '6f1c2a4e-0000-4000-8000-000000000001';
const created = { service: 'order', eventId: 'e1', type: 'order.created', sagaId: saga };
const reserved = { service: 'inventory', eventId: 'e2', type: 'inventory.reserved', sagaId: saga };

/** A run where both events reached Kafka once and both subscribers of each applied them. */
const complete = (): DeliveryInput => ({
  outbox: [created, reserved],
  relayed: [
    { topic: 'order.created', eventId: 'e1', sagaId: saga, copies: 1 },
    { topic: 'inventory.reserved', eventId: 'e2', sagaId: saga, copies: 1 },
  ],
  inbox: [
    { service: 'inventory', eventId: 'e1' },
    { service: 'saga-tracker', eventId: 'e1' },
    { service: 'payment', eventId: 'e2' },
    { service: 'saga-tracker', eventId: 'e2' },
  ],
  subscribers: {
    'order.created': ['inventory', 'saga-tracker'],
    'inventory.reserved': ['payment', 'saga-tracker'],
  },
  deadLetters: [],
});

describe('checkDelivery (no lost events)', () => {
  it('given every outbox row on Kafka and in every subscriber inbox, reports nothing lost', () => {
    const v = checkDelivery(complete());
    assert.deepEqual(
      { lost: v.lost, rows: v.outboxRows, relayed: v.relayedEvents },
      { lost: 0, rows: 2, relayed: 2 },
    );
  });

  it('given an outbox row that never reached Kafka, names it as lost', () => {
    const input = complete();
    input.relayed = input.relayed.filter((e) => e.eventId !== 'e2');
    input.inbox = input.inbox.filter((r) => r.eventId !== 'e2');
    const v = checkDelivery(input);
    assert.equal(v.lost, 1);
    assert.match(v.notRelayed[0], /inventory outbox inventory\.reserved e2 .* is not on Kafka/);
  });

  it('given an event on another topic than its type, counts it as not relayed', () => {
    const input = complete();
    input.relayed[1] = { ...input.relayed[1], topic: 'payment.succeeded' };
    assert.equal(checkDelivery(input).notRelayed.length, 1);
  });

  it('given a subscriber that never applied an event, names the service and the event', () => {
    const input = complete();
    input.inbox = input.inbox.filter((r) => !(r.service === 'payment' && r.eventId === 'e2'));
    const v = checkDelivery(input);
    assert.deepEqual(v.notConsumed, [`payment never applied inventory.reserved e2 (saga ${saga})`]);
    assert.equal(v.lost, 1);
  });

  it('given a subscriber that parked the event on the DLQ, does not count it lost but reports the DLQ entry', () => {
    const input = complete();
    input.inbox = input.inbox.filter((r) => !(r.service === 'payment' && r.eventId === 'e2'));
    input.deadLetters = [
      {
        topic: 'inventory.reserved.dlq',
        sagaId: saga,
        eventId: 'e2',
        consumer: 'payment',
        code: 'X',
        reason: 'y',
      },
    ];
    const v = checkDelivery(input);
    assert.equal(v.lost, 0);
    assert.equal(v.deadLetters.length, 1);
  });

  it('given Kafka copies of the same event (a relay replay), counts the extra copies, not a loss', () => {
    const input = complete();
    input.relayed[0] = { ...input.relayed[0], copies: 3 };
    const v = checkDelivery(input);
    assert.deepEqual({ lost: v.lost, duplicateCopies: v.duplicateCopies }, { lost: 0, duplicateCopies: 2 });
  });
});
