import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ExportResult, ExportResultCode, hrTimeToMilliseconds } from '@opentelemetry/core';
import { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** One finished span as a JSON line: what the local stack writes to .stack/logs/traces.jsonl. */
export interface SpanLine {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  service: string;
  name: string;
  kind: number;
  startMs: number;
  durationMs: number;
  status: number;
  attributes: Record<string, unknown>;
}

/** Exports spans as JSON lines to a file: the default exporter where no OTLP collector runs. */
export class JsonLinesFileExporter implements SpanExporter {
  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      const lines = spans.map((s) => {
        const line: SpanLine = {
          traceId: s.spanContext().traceId,
          spanId: s.spanContext().spanId,
          parentSpanId: s.parentSpanContext?.spanId ?? null,
          service: String(s.resource.attributes['service.name'] ?? 'unknown'),
          name: s.name,
          kind: s.kind,
          startMs: hrTimeToMilliseconds(s.startTime),
          durationMs: hrTimeToMilliseconds(s.duration),
          status: s.status.code,
          attributes: s.attributes,
        };
        return JSON.stringify(line);
      });
      if (lines.length) appendFileSync(this.file, lines.join('\n') + '\n');
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  async shutdown(): Promise<void> {}
}
