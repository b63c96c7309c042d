import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ParkedMessage, matchesFilter, replayOf } from './replay-dlq';

const parked: ParkedMessage = {
  partition: 2,
  offset: '41',
  key: Buffer.from('order-1'),
  value: Buffer.from('{"eventId":"e1"}'),
  headers: {
    eventId: 'e1',
    eventType: 'order.paid',
    sagaId: 'order-1',
    'dlq-code': 'HANDLER_FAILED',
    'dlq-reason': 'db down',
    'dlq-consumer': 'fulfillment',
    'dlq-original-topic': 'order.paid',
    'dlq-original-partition': '2',
    'dlq-original-offset': '1234',
  },
};

describe('DLQ replay', () => {
  it('goes back to the original topic with key, value and envelope headers, without dlq-* headers', () => {
    const { topic, message } = replayOf('order.paid.dlq', parked);
    assert.equal(topic, 'order.paid');
    assert.equal(message.key?.toString(), 'order-1');
    assert.equal(message.value?.toString(), '{"eventId":"e1"}');
    assert.deepEqual(message.headers, {
      eventId: 'e1',
      eventType: 'order.paid',
      sagaId: 'order-1',
      'dlq-replayed-from': 'order.paid.dlq/2/41',
    });
  });

  it('refuses a message without its original topic', () => {
    const headers = { ...parked.headers, 'dlq-original-topic': '' };
    assert.throws(() => replayOf('x.dlq', { ...parked, headers }), /no dlq-original-topic/);
  });

  it('filters on every given field and only those', () => {
    assert.ok(matchesFilter(parked, {}));
    assert.ok(matchesFilter(parked, { code: 'HANDLER_FAILED', consumer: 'fulfillment', sagaId: 'order-1' }));
    assert.ok(!matchesFilter(parked, { eventId: 'other' }));
    assert.ok(!matchesFilter(parked, { consumer: 'payment' }));
  });
});
