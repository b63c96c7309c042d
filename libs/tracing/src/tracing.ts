import {
  Context,
  Span,
  SpanKind,
  SpanOptions,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { JsonLinesFileExporter } from './file-exporter';
import { traceRequests } from './request-spans';

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
 * Starts OpenTelemetry for a service: W3C propagation, a server span per HTTP request (request-spans.ts) and pg
 * spans, unless OTEL_NODE_DISABLED_INSTRUMENTATIONS names them (`tracedParts`). Must run before pg is loaded
 * (main.ts imports '@checkout/tracing/register' first).
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): void {
  if (provider) return;
  const exporter = exporterFromEnv(env);
  const parts = tracedParts(env);
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: exporter ? [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })] : [],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  traceRequests(parts.http);
  registerInstrumentations({ instrumentations: parts.instrumentations });
}

/** What a service traces, by the short names OTEL_NODE_DISABLED_INSTRUMENTATIONS uses. */
const PARTS = ['http', 'pg', 'undici'] as const;

/**
 * What to trace: every part but those OTEL_NODE_DISABLED_INSTRUMENTATIONS names (a comma list, the variable of
 * OpenTelemetry's Node auto-instrumentation): `http`, a server span per request (request-spans.ts); `pg`, a span
 * per query made inside a request or an event; `undici`, a client span per outgoing call made inside one. `pg` is
 * the one worth its price to weigh: its query spans are three quarters of a saga's spans and cost 3.5-5 ms of CPU
 * per saga (docs/runbook.md, "Traces"); without them a saga is still traced end to end, request to request and
 * event to event. An unknown name is an error, so that a typo does not leave a part on unnoticed.
 */
export function tracedParts(env: NodeJS.ProcessEnv): { http: boolean; instrumentations: Instrumentation[] } {
  const disabled = new Set(
    (env.OTEL_NODE_DISABLED_INSTRUMENTATIONS ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
  for (const name of disabled)
    if (!(PARTS as readonly string[]).includes(name))
      throw new Error(`OTEL_NODE_DISABLED_INSTRUMENTATIONS names ${name}: not one of ${PARTS.join(', ')}`);
  const instrumentations: Instrumentation[] = [];
  // A query span only inside a request's or an event's span: polling jobs and pool connects make no traces.
  if (!disabled.has('pg'))
    instrumentations.push(
      new PgInstrumentation({
        enhancedDatabaseReporting: false,
        requireParentSpan: true,
        ignoreConnectSpans: true,
      }),
    );
  // A client span for a call made inside a request's or an event's span (payment's charges and refunds at the
  // PSP, the simulator's webhooks), and the call carries its traceparent: the other side joins the saga's trace.
  if (!disabled.has('undici'))
    instrumentations.push(new UndiciInstrumentation({ requireParentforSpans: true }));
  return { http: !disabled.has('http'), instrumentations };
}

/** Flushes and stops the tracer provider (on SIGTERM, after the app closed). */
export async function stopTracing(): Promise<void> {
  traceRequests(false);
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
 * Runs work that a saga's event started but that runs later, outside the event's span (a payment's charge at the
 * PSP, picked up by a worker), in an INTERNAL span that continues the trace the event carried (`traceparent`): its
 * outgoing calls, queries and published events join the saga's trace. A thrown error marks the span and is
 * rethrown.
 */
export function withSpanOf<R>(
  traceparent: string | null | undefined,
  name: string,
  attributes: Record<string, string>,
  fn: () => Promise<R>,
): Promise<R> {
  return inActiveSpan(
    '@checkout/tracing',
    name,
    { kind: SpanKind.INTERNAL, attributes },
    contextOf(traceparent),
    fn,
  );
}

/**
 * Runs a consumer's handling of one event in a CONSUMER span that continues the event's trace, so the
 * handler's DB writes and the events it publishes join the trace of the request that started the saga.
 */
export function withEventSpan<R>(event: TracedEvent, consumer: string, fn: () => Promise<R>): Promise<R> {
  return inActiveSpan(
    '@checkout/messaging',
    `${event.type} process`,
    eventSpanOptions(event, consumer),
    contextOf(event.traceparent),
    fn,
  );
}

/** The events of one transaction handled together (a batch handler's chunk), each with its own consumer span. */
export interface EventSpans {
  /** Runs fn with that event's span active (its queries and the events it publishes join its trace). */
  within<R>(event: { eventId: string }, fn: () => Promise<R>): Promise<R>;
  /** Ends every span, as failed when the transaction did not commit. */
  end(error?: unknown): void;
}

/**
 * A consumer span per event of a chunk one transaction applies together, each continuing its own event's trace
 * and lasting as long as the chunk: every saga's trace shows its event handled, even when the handler works on
 * the whole chunk at once (`messaging.batch.message_count` says how many shared it).
 */
export function startEventSpans(events: readonly TracedEvent[], consumer: string): EventSpans {
  const tracer = trace.getTracer('@checkout/messaging');
  const spans = new Map(
    events.map((event) => {
      const parent = contextOf(event.traceparent);
      const options = eventSpanOptions(event, consumer);
      options.attributes!['messaging.batch.message_count'] = events.length;
      const span = tracer.startSpan(`${event.type} process`, options, parent);
      return [event.eventId, { span, context: trace.setSpan(parent, span) }] as const;
    }),
  );
  return {
    within: (event, fn) => {
      const found = spans.get(event.eventId);
      return found ? context.with(found.context, fn) : fn();
    },
    end: (error) => {
      for (const { span } of spans.values()) {
        if (error !== undefined) markFailed(span, error);
        span.end();
      }
    },
  };
}

/** What withEventSpan and startEventSpans need of an event. */
type TracedEvent = {
  type: string;
  eventId: string;
  sagaId: string;
  tenantId: string;
  traceparent: string | null;
};

function eventSpanOptions(event: TracedEvent, consumer: string): SpanOptions {
  return {
    kind: SpanKind.CONSUMER,
    attributes: {
      'messaging.system': 'kafka',
      'messaging.destination.name': event.type,
      'messaging.message.id': event.eventId,
      'messaging.consumer.group.name': consumer,
      'saga.id': event.sagaId,
      'tenant.id': event.tenantId,
    },
  };
}

/** Runs fn in a new span made active under `parent`; a thrown error marks the span failed and is rethrown. */
function inActiveSpan<R>(
  tracer: string,
  name: string,
  options: SpanOptions,
  parent: Context,
  fn: () => Promise<R>,
): Promise<R> {
  return trace.getTracer(tracer).startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn();
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function markFailed(span: Span, error: unknown): void {
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
}
