import { IncomingMessage } from 'node:http';
import { Context, Span, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { JsonLinesFileExporter } from './file-exporter';

let provider: NodeTracerProvider | undefined;

/** Which exporter OTEL_TRACES_EXPORTER asks for: otlp (OTEL_EXPORTER_OTLP_ENDPOINT), console, file (TRACE_FILE), none. */
function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter | undefined {
  const kind = env.OTEL_TRACES_EXPORTER ?? (env.TRACE_FILE ? 'file' : 'none');
  switch (kind) {
    case 'otlp':
      return new OTLPTraceExporter();
    case 'console':
      return new ConsoleSpanExporter();
    case 'file':
      if (!env.TRACE_FILE) throw new Error('OTEL_TRACES_EXPORTER=file needs TRACE_FILE');
      return new JsonLinesFileExporter(
        env.TRACE_FILE,
        env.TRACE_FILE_MAX_BYTES ? Number(env.TRACE_FILE_MAX_BYTES) : undefined,
      );
    case 'none':
      return undefined;
    default:
      throw new Error(`OTEL_TRACES_EXPORTER=${kind} is not one of otlp, console, file, none`);
  }
}

/**
 * Starts OpenTelemetry for a service: W3C propagation, HTTP and pg spans (`instrumentationsFor`). Must run before those
 * modules are loaded (main.ts imports '@checkout/tracing/register' first).
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): void {
  if (provider) return;
  const exporter = exporterFromEnv(env);
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: exporter ? [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })] : [],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({ instrumentations: instrumentationsFor(env) });
}

/** The instrumentations a service can run, by the short names OTEL_NODE_DISABLED_INSTRUMENTATIONS uses. */
const INSTRUMENTATIONS = {
  http: () =>
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => req.url?.startsWith('/health') === true || req.url === '/metrics',
      applyCustomAttributesOnSpan: (span, request) => nameByRoute(span, request),
    }),
  // A query span only inside a request's or an event's span: polling jobs and pool connects make no traces.
  pg: () =>
    new PgInstrumentation({
      enhancedDatabaseReporting: false,
      requireParentSpan: true,
      ignoreConnectSpans: true,
    }),
};

/**
 * The instrumentations to register: all of them but those OTEL_NODE_DISABLED_INSTRUMENTATIONS names (a comma
 * list, the variable of OpenTelemetry's Node auto-instrumentation). `pg` is the one worth its price to weigh: its
 * query spans are three quarters of a saga's spans and cost 3.5-5 ms of CPU per saga (docs/runbook.md, "Traces");
 * without them a saga is still traced end to end, request to request and event to event. An unknown name is an
 * error, so that a typo does not leave the instrumentation on unnoticed.
 */
export function instrumentationsFor(env: NodeJS.ProcessEnv): Instrumentation[] {
  const disabled = new Set(
    (env.OTEL_NODE_DISABLED_INSTRUMENTATIONS ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
  for (const name of disabled)
    if (!Object.hasOwn(INSTRUMENTATIONS, name))
      throw new Error(
        `OTEL_NODE_DISABLED_INSTRUMENTATIONS names ${name}: not one of ${Object.keys(INSTRUMENTATIONS).join(', ')}`,
      );
  return Object.entries(INSTRUMENTATIONS)
    .filter(([name]) => !disabled.has(name))
    .map(([, create]) => create());
}

/**
 * Names a server span by the route express matched (`POST /v1/orders/:id`, and `http.route`), read when the answer
 * ends. The express instrumentation did this by wrapping every middleware and handler of every request, a tenth
 * of the tracing's CPU on a refused checkout; a request no route matched keeps the method as its name.
 */
export function nameByRoute(span: Span, request: object): void {
  const { route, baseUrl, method } = request as IncomingMessage & {
    route?: { path?: unknown };
    baseUrl?: string;
  };
  if (typeof route?.path !== 'string') return;
  const template = `${baseUrl ?? ''}${route.path}`;
  span.setAttribute('http.route', template);
  span.updateName(`${method ?? 'GET'} ${template}`);
}

/** Flushes and stops the tracer provider (on SIGTERM, after the app closed). */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}

/** The W3C traceparent of the active span, or null: what the outbox writer stores with each event. */
export function activeTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context an event's traceparent names (the root context when it has none). */
export function contextOf(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
}

/**
 * Runs a consumer's handling of one event in a CONSUMER span that continues the event's trace, so the
 * handler's DB writes and the events it publishes join the trace of the request that started the saga.
 */
export function withEventSpan<R>(
  event: { type: string; eventId: string; sagaId: string; tenantId: string; traceparent: string | null },
  consumer: string,
  fn: () => Promise<R>,
): Promise<R> {
  const tracer = trace.getTracer('@checkout/messaging');
  return tracer.startActiveSpan(
    `${event.type} process`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.destination.name': event.type,
        'messaging.message.id': event.eventId,
        'messaging.consumer.group.name': consumer,
        'saga.id': event.sagaId,
        'tenant.id': event.tenantId,
      },
    },
    contextOf(event.traceparent),
    async (span) => {
      try {
        return await fn();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
