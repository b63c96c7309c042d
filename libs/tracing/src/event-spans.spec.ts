import { afterAll, beforeAll, beforeEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { activeTraceparent, startEventSpans } from './tracing';

const event = (n: number) => ({
  type: 'order.created',
  eventId: `e${n}`,
  sagaId: `s${n}`,
  tenantId: 'acme',
  traceparent: `00-${String(n).repeat(32)}-${String(n).repeat(16)}-01`,
});

describe('startEventSpans (the events of a batch handler applied in one transaction; spans kept in memory)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => provider.register({ propagator: new W3CTraceContextPropagator() }));
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  it("gives each event a consumer span in its own trace, active for that event's part of the work", async () => {
    const spans = startEventSpans([event(1), event(2)], 'inventory');
    const published = await spans.within(event(2), async () => activeTraceparent());
    spans.end();
    const finished = exporter.getFinishedSpans();
    assert.deepEqual(
      finished.map((s) => [s.spanContext().traceId, s.parentSpanContext?.spanId, s.kind, s.name]),
      [
        ['1'.repeat(32), '1'.repeat(16), SpanKind.CONSUMER, 'order.created process'],
        ['2'.repeat(32), '2'.repeat(16), SpanKind.CONSUMER, 'order.created process'],
      ],
    );
    assert.equal(finished[1].attributes['messaging.batch.message_count'], 2);
    assert.equal(finished[1].attributes['messaging.message.id'], 'e2');
    assert.equal(finished[1].attributes['messaging.consumer.group.name'], 'inventory');
    assert.equal(published, `00-${'2'.repeat(32)}-${finished[1].spanContext().spanId}-01`);
    assert.ok(finished.every((s) => s.status.code === SpanStatusCode.UNSET));
  });

  it('ends them all as failed when the handler threw', () => {
    const spans = startEventSpans([event(3), event(4)], 'inventory');
    spans.end(new Error('deadlock detected'));
    const finished = exporter.getFinishedSpans();
    assert.equal(finished.length, 2);
    assert.ok(finished.every((s) => s.status.code === SpanStatusCode.ERROR));
    assert.ok(finished.every((s) => s.status.message === 'deadlock detected'));
  });

  it("runs the part of an event it has no span for as it is (no other event's context)", async () => {
    const spans = startEventSpans([event(5)], 'inventory');
    assert.equal(await spans.within(event(6), async () => activeTraceparent()), null);
    spans.end();
  });
});
