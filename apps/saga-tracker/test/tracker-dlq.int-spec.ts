import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Producer } from 'kafkajs';
import { dlqTopic } from '@checkout/contracts';
import { loadStackConfig, stackKafka } from '@checkout/local-stack';
import { TopicReader, rawSagaEvent } from '@checkout/testing';
import { TrackerError } from '../src/cli/saga-api.client';
import { tracker } from './support';

const TOPIC = 'inventory.released';

/** An inventory.released envelope as inventory would publish it, with overrides. */
function released(overrides: Record<string, unknown> = {}) {
  const orderId = randomUUID();
  return rawSagaEvent(
    TOPIC,
    'acme',
    orderId,
    { orderId, lines: [{ sku: 'SAGA-TRK-DLQ', quantity: 1 }], reason: 'expired' },
    overrides,
  );
}

describe('events the tracker cannot accept', () => {
  let producer: Producer;
  let reader: TopicReader;
  beforeAll(async () => {
    producer = stackKafka(loadStackConfig(), 'saga-tracker-spec').producer();
    await producer.connect();
    reader = await new TopicReader([dlqTopic(TOPIC)]).start();
  });
  afterAll(async () => {
    await producer.disconnect();
    await reader.stop();
  });

  const parkedByTracker = (key: string) =>
    reader.waitFor((m) => m.key === key && m.headers['dlq-consumer'] === 'saga-tracker', {
      timeoutMs: 60_000,
    });

  it('parks a broken message, an unknown tenant and a saga id that is not the order on the DLQ, records none', async () => {
    const broken = randomUUID();
    const stranger = released({ tenantId: 'no-such-tenant' });
    const mismatch = released();
    mismatch.sagaId = randomUUID();
    await producer.send({
      topic: TOPIC,
      messages: [
        { key: broken, value: '{"eventId": not json' },
        { key: stranger.sagaId, value: JSON.stringify(stranger) },
        { key: mismatch.sagaId, value: JSON.stringify(mismatch) },
      ],
    });
    const [b] = await parkedByTracker(broken);
    assert.equal(b.headers['dlq-code'], 'CONTRACT.MALFORMED_JSON');
    const [s] = await parkedByTracker(stranger.sagaId);
    assert.equal(s.headers['dlq-code'], 'SAGA.UNKNOWN_TENANT');
    const [m] = await parkedByTracker(mismatch.sagaId);
    assert.equal(m.headers['dlq-code'], 'SAGA.SAGA_MISMATCH');
    for (const id of [mismatch.sagaId, (mismatch.payload as { orderId: string }).orderId])
      await assert.rejects(tracker.saga(id), TrackerError, 'nothing was recorded for it');
  });
});
