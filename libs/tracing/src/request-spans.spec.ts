import { afterAll, beforeAll, beforeEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { IncomingMessage, Server, ServerResponse, createServer, request } from 'node:http';
import { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  activeTraceFields,
  inRequestContext,
  requestTraceFields,
  startRequestSpan,
  traceRequests,
} from './request-spans';
import { activeTraceparent } from './tracing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

/**
 * A real HTTP server whose handler does what the service kit's hooks do: starts the request's span with the route
 * a router matched, then waits a turn of the event loop and answers, from inside the span's context, the
 * traceparent an event published there would carry.
 */
function serve(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer((req, res) => {
    const route = /^\/v1\/orders\/[^/?]+/.test(req.url ?? '') ? '/v1/orders/:orderId' : undefined;
    startRequestSpan(req, res, route);
    inRequestContext(req, () => answer(req, res));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Sends one request; resolves with its status and body ('' when the connection closed without an answer). */
function send(server: Server, path: string, headers: Record<string, string> = {}) {
  const { port } = server.address() as AddressInfo;
  return new Promise<{ status: number; body: string }>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end('{}');
  });
}

describe('request spans (a real HTTP server, spans kept in memory)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let server: Server;

  beforeAll(async () => {
    provider.register({ propagator: new W3CTraceContextPropagator() });
    traceRequests(true);
    server = await serve((req, res) => {
      setImmediate(() => {
        if (req.url?.startsWith('/hang')) return res.socket?.destroy();
        if (req.url?.startsWith('/log-fields'))
          return res.end(JSON.stringify({ active: activeTraceFields(), request: requestTraceFields(req) }));
        const published = activeTraceparent();
        res.statusCode = req.url?.startsWith('/fail') ? 503 : 200;
        res.end(published ?? 'none');
      });
    });
  });
  afterAll(async () => {
    traceRequests(false);
    await new Promise((resolve) => server.close(resolve));
    await provider.shutdown();
    // The API's globals outlive this file in the worker: another spec registers its own provider.
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  /** The spans exported so far, once `count` of them are (a span ends when its answer's 'close' fires). */
  const spans = async (count: number) => {
    const deadline = Date.now() + 5_000;
    while (exporter.getFinishedSpans().length < count && Date.now() < deadline)
      await new Promise((resolve) => setImmediate(resolve));
    return exporter.getFinishedSpans();
  };

  it("continues the caller's trace, names the span by the matched route and keeps the path without its query", async () => {
    const answer = await send(server, '/v1/orders/o-1?secret=x', {
      traceparent: `00-${TRACE_ID}-${PARENT}-01`,
    });
    const [span] = await spans(1);
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.name, 'POST /v1/orders/:orderId');
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, PARENT);
    assert.deepEqual(span.attributes, {
      'http.request.method': 'POST',
      'url.path': '/v1/orders/o-1',
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'http.route': '/v1/orders/:orderId',
      'http.response.status_code': 200,
    });
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.equal(
      answer.body,
      `00-${TRACE_ID}-${span.spanContext().spanId}-01`,
      'what the handler publishes is in the span',
    );
  });

  it('starts a new trace without a traceparent, keeps the method as the name of an unmatched route, marks a 5xx', async () => {
    const answer = await send(server, '/fail');
    const [span] = await spans(1);
    assert.equal(span.name, 'POST');
    assert.equal(span.parentSpanContext, undefined);
    assert.equal(span.attributes['http.response.status_code'], 503);
    assert.equal(span.attributes['error.type'], '503');
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(answer.status, 503);
  });

  it('ends the span of a request whose connection closed before the answer, as an error', async () => {
    const answer = await send(server, '/hang');
    const [span] = await spans(1);
    assert.equal(answer.status, 0);
    assert.equal(span.attributes['error.type'], 'connection_closed');
    assert.equal(span.attributes['http.response.status_code'], undefined);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
  });

  it("records nothing for a caller's unsampled trace, yet its handler publishes the trace and the decision", async () => {
    const answer = await send(server, '/v1/orders/o-2', { traceparent: `00-${TRACE_ID}-${PARENT}-00` });
    assert.match(answer.body, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
    assert.equal((await spans(0)).length, 0);
  });

  it("gives log lines the request span's trace and span id, inside its context and from the request", async () => {
    const answer = await send(server, '/log-fields', { traceparent: `00-${TRACE_ID}-${PARENT}-01` });
    const [span] = await spans(1);
    const fields = { trace_id: TRACE_ID, span_id: span.spanContext().spanId };
    assert.deepEqual(JSON.parse(answer.body), { active: fields, request: fields });
    assert.deepEqual(activeTraceFields(), {}, 'outside any span: no ids');
  });

  it('makes no span while request spans are off (OTEL_NODE_DISABLED_INSTRUMENTATIONS=http)', async () => {
    traceRequests(false);
    try {
      const answer = await send(server, '/v1/orders/o-3', { traceparent: `00-${TRACE_ID}-${PARENT}-01` });
      assert.equal(answer.body, 'none', 'no active span in the handler');
    } finally {
      traceRequests(true);
    }
    assert.equal((await spans(0)).length, 0);
  });
});
