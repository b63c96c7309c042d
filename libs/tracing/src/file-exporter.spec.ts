import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { JsonLinesFileExporter } from './file-exporter';

/** Finished spans to export, made by a real tracer. */
function spans(n: number) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('spec');
  for (let i = 0; i < n; i += 1) tracer.startSpan(`span-${i}`).end();
  return memory.getFinishedSpans();
}

const exportAll = (exporter: JsonLinesFileExporter, batch: ReturnType<typeof spans>) =>
  new Promise<number>((resolve) => exporter.export(batch, (r) => resolve(r.code)));

describe('JSON-lines trace file', () => {
  it('writes one line per span', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'traces-')), 'traces.jsonl');
    assert.equal(await exportAll(new JsonLinesFileExporter(file), spans(3)), ExportResultCode.SUCCESS);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.name),
      ['span-0', 'span-1', 'span-2'],
    );
  });

  it('rotates a file past its size limit, keeping the previous one as .1', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'traces-')), 'traces.jsonl');
    writeFileSync(file, 'x'.repeat(2_000) + '\n');
    await exportAll(new JsonLinesFileExporter(file, 1_000), spans(1));
    assert.ok(existsSync(`${file}.1`));
    assert.equal(readFileSync(`${file}.1`, 'utf8').length, 2_001);
    assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 1);
  });
});
