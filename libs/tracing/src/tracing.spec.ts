import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Span } from '@opentelemetry/api';
import { nameByRoute } from './tracing';

/** A span that keeps what it was told: its name and attributes. */
function recordingSpan() {
  const seen = { name: 'POST', attributes: {} as Record<string, unknown> };
  const span = {
    setAttribute: (key: string, value: unknown) => ((seen.attributes[key] = value), span),
    updateName: (name: string) => ((seen.name = name), span),
  };
  return { span: span as unknown as Span, seen };
}

describe('nameByRoute', () => {
  it('names a server span by the route template express matched, under its base URL', () => {
    const { span, seen } = recordingSpan();
    nameByRoute(span, { method: 'GET', baseUrl: '/v1', route: { path: '/orders/:orderId' } });
    assert.equal(seen.name, 'GET /v1/orders/:orderId');
    assert.deepEqual(seen.attributes, { 'http.route': '/v1/orders/:orderId' });
  });

  it('leaves a request without a matched route (and an outgoing request) as it was', () => {
    const { span, seen } = recordingSpan();
    nameByRoute(span, { method: 'POST', path: '/v1/psp/webhooks' });
    assert.equal(seen.name, 'POST');
    assert.deepEqual(seen.attributes, {});
  });
});
