import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TopicReader, loadStackConfig, waitFor } from '@checkout/testing';
import { SpanLine } from '../src';

const config = loadStackConfig();
const order = `http://127.0.0.1:${config.servicePorts.order}`;
const auth = { authorization: 'Bearer acme-dev-key', 'content-type': 'application/json' };
const TRACES = join(config.logs, 'traces.jsonl');
const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** The whole lines of a file from a byte offset on (a line cut by the offset is left out). */
function linesFrom(file: string, from: number): string[] {
  const fd = openSync(file, 'r');
  try {
    const at = Math.max(0, from - 1);
    const bytes = Buffer.alloc(Math.max(0, fstatSync(fd).size - at));
    readSync(fd, bytes, 0, bytes.length, at);
    const lines = bytes.toString('utf8').split('\n');
    // Reading from the byte before the offset: an empty first piece means the offset starts a line.
    if (from > 0) lines.shift();
    return lines.filter(Boolean);
  } finally {
    closeSync(fd);
  }
}

/**
 * The spans written since this spec started: a long-lived stack's trace file holds up to TRACE_FILE_MAX_BYTES
 * (1 GiB), more than one string can (512 MB), so it is read from where it ended at the start; if it was rotated
 * meanwhile, the rest of the old file (`<file>.1`) comes first.
 */
let start = 0;
const spans = (): SpanLine[] =>
  (sizeOf(TRACES) >= start
    ? linesFrom(TRACES, start)
    : [...linesFrom(`${TRACES}.1`, start), ...linesFrom(TRACES, 0)]
  ).map((l) => JSON.parse(l) as SpanLine);

describe('one checkout is one trace across services', () => {
  let reader: TopicReader;
  beforeAll(async () => {
    start = sizeOf(TRACES);
    reader = await new TopicReader(['order.created', 'inventory.rejected', 'inventory.reserved']).start();
  });
  afterAll(() => reader.stop());

  it('continues the caller traceparent through the order outbox, Debezium, Kafka and the inventory consumer', async () => {
    const sku = `TRACE-${randomBytes(4).toString('hex')}`;
    const price = await fetch(`${order}/v1/admin/prices/${sku}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ unitPrice: 1000, currency: 'VND' }),
    });
    assert.equal(price.status, 200);

    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${order}/v1/checkout`, {
      method: 'POST',
      headers: {
        ...auth,
        'idempotency-key': randomUUID(),
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({
        customerId: 'c-trace',
        currency: 'VND',
        lines: [{ sku, quantity: 1 }],
        payment: { token: 'tok_success' },
      }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { orderId } = (await res.json()) as { orderId: string };

    const [created] = await reader.waitFor((m) => m.topic === 'order.created' && m.key === orderId);
    assert.equal(
      created.headers.traceparent.split('-')[1],
      traceId,
      'order.created carries the request trace',
    );
    // The SKU has a price but no stock row: inventory answers, from inside the continued trace.
    const [answer] = await reader.waitFor((m) => m.topic.startsWith('inventory.') && m.key === orderId);
    assert.equal(
      answer.headers.traceparent.split('-')[1],
      traceId,
      `${answer.topic} continues the same trace`,
    );
    assert.equal(answer.headers.causationId, created.headers.eventId);

    const inTrace = await waitFor(
      'spans of both services in the trace file',
      async () => {
        const mine = spans().filter((s) => s.traceId === traceId);
        const services = new Set(mine.map((s) => s.service));
        return services.has('order') &&
          services.has('inventory') &&
          mine.some((s) => s.name === 'order.created process')
          ? mine
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const orderSpans = inTrace.filter((s) => s.service === 'order');
    const server = orderSpans.find((s) => s.kind === 1);
    assert.ok(server, 'an HTTP server span in order');
    // Named by the route the router matched (the service kit's first hook).
    assert.equal(server.name, 'POST /v1/checkout');
    assert.equal(server.attributes['http.route'], '/v1/checkout');
    assert.ok(
      orderSpans.some(
        (s) => String(s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'postgresql',
      ),
      'pg spans in order',
    );
    const consumerSpan = inTrace.find((s) => s.service === 'inventory' && s.name === 'order.created process');
    assert.equal(consumerSpan?.attributes['saga.id'], orderId);
    assert.ok(
      inTrace.some((s) => s.service === 'inventory' && s.parentSpanId === consumerSpan?.spanId),
      'inventory DB writes are children of the consumer span',
    );
  });
});
