import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { activeTraceparent, startTracing, stopTracing, withEventSpan } from './tracing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const event = (traceparent: string | null) => ({
  type: 'order.created',
  eventId: 'e1',
  sagaId: 's1',
  tenantId: 'acme',
  traceparent,
});

/** What a handler sees inside its event span: whether that span records, and the traceparent it would publish. */
const insideEventSpan = (traceparent: string | null) =>
  withEventSpan(event(traceparent), 'spec', async () => ({
    recording: trace.getActiveSpan()?.isRecording() ?? false,
    published: activeTraceparent(),
  }));

// The standard OTel sampler variables, read by the SDK when the provider starts (runbook, "Traces"). Ratio 0: no
// new trace is sampled here, so any recorded span below was sampled by its parent.
describe('sampling with OTEL_TRACES_SAMPLER=parentbased_traceidratio', () => {
  const saved = { sampler: process.env.OTEL_TRACES_SAMPLER, arg: process.env.OTEL_TRACES_SAMPLER_ARG };
  beforeAll(() => {
    process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio';
    process.env.OTEL_TRACES_SAMPLER_ARG = '0';
    startTracing('sampling-spec', {
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'http,pg,undici',
    });
  });
  afterAll(async () => {
    await stopTracing();
    for (const [key, value] of [
      ['OTEL_TRACES_SAMPLER', saved.sampler],
      ['OTEL_TRACES_SAMPLER_ARG', saved.arg],
    ] as const)
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
  });

  it("follows a sampled saga's decision: the event's span records and what it publishes stays sampled", async () => {
    const seen = await insideEventSpan(`00-${TRACE_ID}-00f067aa0ba902b7-01`);
    assert.equal(seen.recording, true);
    assert.match(seen.published ?? '', new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
  });

  it('keeps an unsampled saga unsampled: no span recorded, yet its trace id and decision travel on', async () => {
    const seen = await insideEventSpan(`00-${TRACE_ID}-00f067aa0ba902b7-00`);
    assert.equal(seen.recording, false);
    assert.match(seen.published ?? '', new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
  });

  it('samples a new saga (no traceparent) by the ratio: at 0, none', async () => {
    const seen = await insideEventSpan(null);
    assert.equal(seen.recording, false);
  });
});
