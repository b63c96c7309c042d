import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, parseEvent } from '@checkout/contracts';
import { SpanLine } from '@checkout/tracing';
import { TopicReader, loadStackConfig, waitFor } from '@checkout/testing';
import {
  ACME_KEY,
  GLOBEX_KEY,
  SHIPPED_PATH,
  TRACKER_URL,
  checkout,
  newTraceparent,
  tracker,
  waitForSaga,
} from './support';

// The compiled CLI (the stack runs the services from dist/ too; this spec runs from test/ under jest).
const CLI = join(__dirname, '..', 'dist', 'src', 'cli.js');
const traceFile = join(loadStackConfig().logs, 'traces.jsonl');
const SPAN_KIND = { INTERNAL: 0, SERVER: 1, CLIENT: 2, CONSUMER: 4 };

/**
 * The spans of the traces this spec started, read from the file the local stack's services export to. The
 * file grows by every run of every spec (it can pass a gigabyte), so it is scanned from where it ended when
 * the spec started, in chunks, keeping only the lines of the wanted traces.
 */
class TraceFile {
  private position = existsSync(traceFile) ? statSync(traceFile).size : 0;
  private rest = '';
  private readonly kept: SpanLine[] = [];

  constructor(private readonly traceIds: Set<string>) {}

  spansOf(traceId: string): SpanLine[] {
    const fd = openSync(traceFile, 'r');
    try {
      const chunk = Buffer.alloc(8 * 1024 * 1024);
      for (;;) {
        const read = readSync(fd, chunk, 0, chunk.length, this.position);
        if (read === 0) break;
        this.position += read;
        const lines = (this.rest + chunk.toString('utf8', 0, read)).split('\n');
        this.rest = lines.pop() ?? '';
        for (const line of lines) {
          const id = /"traceId":"([0-9a-f]{32})"/.exec(line)?.[1];
          if (id && this.traceIds.has(id)) this.kept.push(JSON.parse(line) as SpanLine);
        }
      }
    } finally {
      closeSync(fd);
    }
    return this.kept.filter((s) => s.traceId === traceId);
  }
}

const traced = new Set<string>();
const traces = new TraceFile(traced);

const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    // the CLI's default URL (port 3005) knows no STACK_PORT_OFFSET: the tracker of this stack, unless a test says
    env: { ...process.env, SAGA_TRACKER_URL: TRACKER_URL, ...env },
  });

/**
 * Checks that one trace holds the checkout request, in every app a consumer span with its DB writes, and the
 * charge's call to the PSP with the PSP's side of it.
 */
async function assertOneTrace(traceId: string, orderId: string): Promise<void> {
  traced.add(traceId);
  // One trace: the HTTP request and the consumers of every app, with their DB writes.
  const apps = ['order', 'inventory', 'payment', 'fulfillment', 'saga-tracker'];
  const spans = await waitFor(
    'consumer spans of every app in the trace file',
    async () => {
      const found = traces.spansOf(traceId);
      const consuming = new Set(found.filter((s) => s.kind === SPAN_KIND.CONSUMER).map((s) => s.service));
      const atPsp = found.some((s) => s.service === 'psp-simulator' && s.kind === SPAN_KIND.SERVER);
      return apps.every((a) => consuming.has(a)) && atPsp ? found : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  assert.ok(
    spans.some((s) => s.service === 'order' && s.kind === SPAN_KIND.SERVER),
    'the checkout HTTP request is the root of the trace',
  );
  for (const app of apps) {
    const consumers = spans.filter((s) => s.service === app && s.kind === SPAN_KIND.CONSUMER);
    assert.ok(
      spans.some(
        (s) =>
          s.service === app &&
          String(s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql' &&
          consumers.some((c) => c.spanId === s.parentSpanId),
      ),
      `${app}: DB writes inside its consumer span`,
    );
  }
  const handled = spans
    .filter((s) => s.kind === SPAN_KIND.CONSUMER)
    .map((s) => `${s.service} ${String(s.attributes['messaging.message.id'])}`);
  assert.deepEqual(
    handled.filter((h, i) => handled.indexOf(h) !== i),
    [],
    'each app handles each event in one consumer span',
  );
  assert.ok(
    spans.some((s) => s.service === 'saga-tracker' && s.attributes['saga.id'] === orderId),
    'the tracker records the steps inside the same trace',
  );
  // The charge, though the worker picks the attempt up outside any event's span: its call to the PSP, and the
  // PSP's handling of that call, are in the saga's trace.
  const charge = spans.find(
    (s) => s.service === 'payment' && s.kind === SPAN_KIND.INTERNAL && s.name === 'payment charge',
  );
  assert.ok(charge, "payment's charge span");
  const call = spans.find(
    (s) => s.service === 'payment' && s.kind === SPAN_KIND.CLIENT && s.parentSpanId === charge.spanId,
  );
  assert.ok(call, 'the charge call to the PSP, a client span inside the charge');
  assert.ok(
    spans.some(
      (s) => s.service === 'psp-simulator' && s.kind === SPAN_KIND.SERVER && s.parentSpanId === call.spanId,
    ),
    'the PSP handled that call in the same trace',
  );
}

describe('saga timeline of real checkouts', () => {
  let reader: TopicReader;
  beforeAll(async () => {
    reader = await new TopicReader([...SAGA_TOPICS]).start();
  });
  afterAll(() => reader.stop());

  /** The saga's distinct events as Kafka holds them (the truth the tracker must show). */
  const eventsOnKafka = (orderId: string) => [
    ...new Map(
      reader.matching((m) => m.key === orderId).map((m) => [m.headers.eventId, parseEvent(m.value ?? '')]),
    ).values(),
  ];

  let orderId = '';
  let traceId = '';
  let traceparent = '';

  it('shows every step of a PSP-timeout checkout in order, ending SHIPPED', async () => {
    ({ traceId, traceparent } = newTraceparent());
    traced.add(traceId);
    orderId = await checkout('tok_timeout_success', { traceparent });
    const saga = await waitForSaga(orderId, 'ended', (s) => s.state.terminal);

    assert.equal(saga.state.status, 'SHIPPED');
    assert.deepEqual(
      saga.timeline.map((s) => s.type),
      SHIPPED_PATH,
      'the PSP timeout is never a failure: no payment.failed, no cancellation',
    );
    assert.deepEqual(
      saga.timeline.map((s) => s.service),
      ['order', 'inventory', 'payment', 'inventory', 'order', 'fulfillment'],
    );
    assert.ok(saga.timeline.every((s) => !s.compensation));
    assert.equal(saga.timeline.at(-1)?.outcome, 'terminal');
    for (const step of saga.timeline.slice(1))
      assert.ok(step.causedBy !== null && step.causedBy < step.index, `${step.type} follows its cause`);
    assert.ok(saga.timeline.every((s, i) => i === 0 || s.offsetMs >= saga.timeline[i - 1].offsetMs));
    assert.equal(saga.state.waitingFor, null);
    assert.equal(saga.state.stuck, false);

    // Every event Kafka holds for the saga is on the timeline, and nothing else.
    const onKafka = await waitFor('the saga events on Kafka', async () => {
      const events = eventsOnKafka(orderId);
      return events.length >= saga.timeline.length ? events : undefined;
    });
    assert.deepEqual(onKafka.map((e) => e.eventId).sort(), saga.timeline.map((s) => s.eventId).sort());

    // The CLI prints the same sequence, one line per step.
    const printed = cli(['trace', orderId]);
    assert.equal(printed.status, 0, printed.stderr);
    const lines = printed.stdout.trim().split('\n');
    assert.match(lines[0], new RegExp(`^order ${orderId}\\s+SHIPPED\\s+ended`));
    assert.match(lines[1], /^trace [0-9a-f]{32}/);
    assert.deepEqual(
      lines.slice(2).map((l) => l.trim().split(/\s+/).slice(0, 3)),
      saga.timeline.map((s) => [`+${(s.offsetMs / 1000).toFixed(3)}s`, s.service, s.type]),
    );
  });

  it('links the PSP-timeout checkout request, every step and the consumers of every app in one trace', async () => {
    assert.ok(orderId, 'the PSP-timeout checkout above ran');
    const saga = await tracker.saga(orderId);
    assert.deepEqual(saga.traceIds, [traceId], 'every step carries the trace of the checkout request');
    await assertOneTrace(traceId, orderId);
  });

  it('links a checkout the PSP answers at once in one trace as well', async () => {
    const fresh = newTraceparent();
    traced.add(fresh.traceId);
    const id = await checkout('tok_success', { traceparent: fresh.traceparent });
    const saga = await waitForSaga(id, 'ended', (s) => s.state.terminal);
    assert.equal(saga.state.status, 'SHIPPED');
    assert.deepEqual(saga.traceIds, [fresh.traceId]);
    await assertOneTrace(fresh.traceId, id);
  });

  it('marks the compensations of a declined payment: CANCELLED, stock released', async () => {
    const orderId = await checkout('tok_decline');
    const saga = await waitForSaga(orderId, 'ended', (s) => s.state.terminal);

    assert.equal(saga.state.status, 'CANCELLED');
    assert.equal(saga.state.compensated, true);
    const types = saga.timeline.map((s) => s.type);
    assert.deepEqual(types.slice(0, 3), ['order.created', 'inventory.reserved', 'payment.failed']);
    assert.deepEqual(
      [...types.slice(3)].sort(),
      ['inventory.released', 'order.cancelled'],
      'the order cancels and inventory releases the stock, in either order',
    );
    const step = (type: string) => saga.timeline.find((s) => s.type === type)!;
    assert.equal(step('payment.failed').outcome, 'failure');
    assert.equal(step('payment.failed').compensation, false);
    for (const t of ['order.cancelled', 'inventory.released']) {
      assert.equal(step(t).compensation, true, `${t} is marked as a compensation`);
      assert.equal(step(t).outcome, 'compensation');
      assert.equal(saga.timeline[step(t).causedBy!].type, 'payment.failed', `${t} reacts to the decline`);
    }
    assert.match(step('inventory.released').detail ?? '', /payment_failed/);
    assert.equal(saga.state.lastStep.eventId, saga.timeline.at(-1)?.eventId);

    const printed = cli(['trace', orderId]);
    assert.equal(printed.status, 0, printed.stderr);
    const marked = printed.stdout.split('\n').filter((l) => l.includes('<< COMPENSATION'));
    assert.equal(marked.length, 2);
    assert.ok(marked.some((l) => l.includes('inventory.released')));
  });

  it('scopes sagas to the tenant of the key and validates what it is asked', async () => {
    const orderId = await checkout('tok_success');
    await waitForSaga(orderId, 'recorded', () => true);
    const asGlobex = await fetch(`${TRACKER_URL}/v1/sagas/${orderId}`, {
      headers: { authorization: `Bearer ${GLOBEX_KEY}` },
    });
    assert.equal(asGlobex.status, 404, "another tenant's saga does not exist for globex");
    assert.equal(((await asGlobex.json()) as { error: string }).error, 'SAGA_NOT_FOUND');
    const unknown = await fetch(`${TRACKER_URL}/v1/sagas/${randomUUID()}`, {
      headers: { authorization: `Bearer ${ACME_KEY}` },
    });
    assert.equal(unknown.status, 404);
    const anonymous = await fetch(`${TRACKER_URL}/v1/sagas/${orderId}`);
    assert.equal(anonymous.status, 401);
    for (const path of [
      '/v1/sagas/not-a-uuid',
      '/v1/sagas?stuck=yes',
      '/v1/sagas?limit=0',
      '/v1/sagas?color=red',
    ]) {
      const res = await fetch(`${TRACKER_URL}${path}`, { headers: { authorization: `Bearer ${ACME_KEY}` } });
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as { error: string }).error, 'VALIDATION_FAILED', path);
    }
    const recent = await tracker.saga(orderId);
    assert.equal(recent.tenantId, 'acme');
  });

  it('gives clear CLI errors for an unknown order and for a tracker that does not answer', () => {
    const unknown = cli(['trace', randomUUID()]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /no saga for order .* in this tenant/);
    const down = cli(['stuck'], { SAGA_TRACKER_URL: 'http://127.0.0.1:9' });
    assert.equal(down.status, 1);
    assert.match(down.stderr, /the saga tracker does not answer at http:\/\/127\.0\.0\.1:9/);
    const usage = cli(['trace']);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /usage: npm run saga -- trace <orderId> \| stuck/);
  });
});
