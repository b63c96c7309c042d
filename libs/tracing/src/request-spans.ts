import { IncomingMessage, ServerResponse } from 'node:http';
import {
  Context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';

/**
 * A server span per HTTP request, without @opentelemetry/instrumentation-http. That instrumentation bound every
 * request's and answer's event emitters to the span's context (each listener express, the body parser and the
 * logger add is wrapped again) and filled two generations of semantic-convention attributes: 0.13 ms of CPU per
 * request, a fifth of a refused checkout's (bench/results/s42/ab-http-*). Its client spans were never used: our
 * outgoing calls go through undici, which it does not see (instrumentation-undici does: tracing.ts).
 *
 * Here the span starts when the request reaches the app (`startRequestSpan`, the service kit's first hook, once the
 * router has matched), continues the caller's `traceparent`, is named by the route matched and ends when the answer
 * is sent or the connection closes. The app makes it the active span for the rest of the request
 * (`inRequestContext`, the kit's hook right after the body is read), so the handler's queries and the events it
 * publishes join its trace.
 */
const REQUEST_SPAN = Symbol('request-span-context');

/** Whether requests get a span: off until startTracing turns it on (OTEL_NODE_DISABLED_INSTRUMENTATIONS=http keeps it off). */
let tracing = false;

/** Turns the request spans on or off (startTracing, stopTracing). */
export function traceRequests(on: boolean): void {
  tracing = on;
}

type TracedRequest = IncomingMessage & { [REQUEST_SPAN]?: Context };

/** Attribute keys of the stable HTTP semantic conventions. */
const ATTR = {
  method: 'http.request.method',
  path: 'url.path',
  scheme: 'url.scheme',
  route: 'http.route',
  status: 'http.response.status_code',
  errorType: 'error.type',
  protocol: 'network.protocol.version',
} as const;

/**
 * Starts the SERVER span of a request, a child of the `traceparent` it carries, named by the route the app matched
 * (`POST /v1/orders/:orderId`; a request no route matched keeps its method as its name), and ends it with the
 * answer: its status code, and an error status for a 5xx or a connection closed before the answer was sent.
 */
export function startRequestSpan(req: IncomingMessage, res: ServerResponse, route?: string): void {
  const traced = req as TracedRequest;
  if (!tracing || traced[REQUEST_SPAN]) return;
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const span = trace.getTracer('@checkout/tracing').startSpan(
    route === undefined ? method : `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR.method]: method,
        [ATTR.path]: query === -1 ? url : url.slice(0, query),
        [ATTR.scheme]: 'http',
        [ATTR.protocol]: req.httpVersion,
        ...(route === undefined ? {} : { [ATTR.route]: route }),
      },
    },
    parent,
  );
  traced[REQUEST_SPAN] = trace.setSpan(parent, span);
  if (!span.isRecording()) return;
  res.once('close', () => {
    if (res.writableFinished || res.headersSent) span.setAttribute(ATTR.status, res.statusCode);
    if (!res.writableFinished) {
      span.setAttribute(ATTR.errorType, 'connection_closed');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'connection closed before the answer was sent' });
    } else if (res.statusCode >= 500) {
      span.setAttribute(ATTR.errorType, String(res.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}

/**
 * Runs `fn` with the request's span (startRequestSpan) active: what `fn` starts and awaits (queries, the events
 * it publishes) joins the request's trace. Without a span (not traced) `fn` just runs.
 */
export function inRequestContext<T>(req: IncomingMessage, fn: () => T): T {
  const ctx = (req as TracedRequest)[REQUEST_SPAN];
  return ctx ? context.with(ctx, fn) : fn();
}

/** The ids a log line carries to find its trace (the OpenTelemetry log data model's field names). */
export interface TraceLogFields {
  trace_id: string;
  span_id: string;
}

const logFieldsOf = (ctx: Context | undefined): TraceLogFields | undefined => {
  const span = ctx && trace.getSpanContext(ctx);
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
};

/** The trace and span id of a request's span (startRequestSpan), or undefined when it has none. */
export function requestTraceFields(req: IncomingMessage): TraceLogFields | undefined {
  return logFieldsOf((req as TracedRequest)[REQUEST_SPAN]);
}

/**
 * The trace and span id of the active span, for every log line (pino's `mixin`): a handler's or a consumer's line
 * joins the trace of the request or the event it was written for. Nothing outside a span. A new object each call:
 * pino merges the line's own fields into it.
 */
export function activeTraceFields(): TraceLogFields | Record<string, never> {
  return logFieldsOf(context.active()) ?? {};
}
