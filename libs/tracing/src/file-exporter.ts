import { appendFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
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

/**
 * Exports spans as JSON lines to a file: the default exporter where no OTLP collector runs. The file is
 * rotated once it passes `maxBytes` (TRACE_FILE_MAX_BYTES, 1 GiB; the previous one is kept as `<file>.1`), so a
 * long-lived dev stack does not fill the disk.
 */
export class JsonLinesFileExporter implements SpanExporter {
  constructor(
    private readonly file: string,
    private readonly maxBytes = 1024 ** 3,
  ) {
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
      if (lines.length) {
        // Every service of the local stack appends to the same file: its size is read, not counted.
        if (existsSync(this.file) && statSync(this.file).size > this.maxBytes)
          renameSync(this.file, `${this.file}.1`);
        appendFileSync(this.file, lines.join('\n') + '\n');
      }
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  async shutdown(): Promise<void> {}
}
