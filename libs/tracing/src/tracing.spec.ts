import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Span } from '@opentelemetry/api';
import { instrumentationsFor, nameByRoute } from './tracing';

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

describe('instrumentationsFor', () => {
  /** The instrumentations an environment asks for, by package name (disabled again: creating one enables it). */
  const names = (env: NodeJS.ProcessEnv) =>
    instrumentationsFor(env).map((instrumentation) => {
      instrumentation.disable();
      return instrumentation.instrumentationName;
    });

  it('runs the HTTP and pg instrumentations by default', () => {
    assert.deepEqual(names({}), ['@opentelemetry/instrumentation-http', '@opentelemetry/instrumentation-pg']);
  });

  it('leaves out those OTEL_NODE_DISABLED_INSTRUMENTATIONS names', () => {
    assert.deepEqual(names({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' }), [
      '@opentelemetry/instrumentation-http',
    ]);
    assert.deepEqual(names({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: ' pg , http ,' }), []);
  });

  it('refuses a name it does not know rather than leave that instrumentation on', () => {
    assert.throws(
      () => instrumentationsFor({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg,fs' }),
      /OTEL_NODE_DISABLED_INSTRUMENTATIONS names fs: not one of http, pg/,
    );
  });
});
