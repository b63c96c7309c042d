import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { tracedParts } from './tracing';

describe('tracedParts', () => {
  /** What an environment asks to trace: request spans, and the instrumentations by package name (disabled
   * again: creating one enables it). */
  const parts = (env: NodeJS.ProcessEnv) => {
    const { http, instrumentations } = tracedParts(env);
    return {
      http,
      instrumentations: instrumentations.map((instrumentation) => {
        instrumentation.disable();
        return instrumentation.instrumentationName;
      }),
    };
  };

  it('traces HTTP requests, pg queries and outgoing undici calls by default', () => {
    assert.deepEqual(parts({}), {
      http: true,
      instrumentations: ['@opentelemetry/instrumentation-pg', '@opentelemetry/instrumentation-undici'],
    });
  });

  it('leaves out those OTEL_NODE_DISABLED_INSTRUMENTATIONS names', () => {
    assert.deepEqual(parts({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' }), {
      http: true,
      instrumentations: ['@opentelemetry/instrumentation-undici'],
    });
    assert.deepEqual(parts({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'http,undici' }), {
      http: false,
      instrumentations: ['@opentelemetry/instrumentation-pg'],
    });
    assert.deepEqual(parts({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: ' pg , http , undici,' }), {
      http: false,
      instrumentations: [],
    });
  });

  it('refuses a name it does not know rather than leave that instrumentation on', () => {
    assert.throws(
      () => tracedParts({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg,fs' }),
      /OTEL_NODE_DISABLED_INSTRUMENTATIONS names fs: not one of http, pg, undici/,
    );
  });
});
