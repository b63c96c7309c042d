import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { DB_SERVICES } from '@checkout/local-stack';
import { isTerminalStatus } from '@checkout/contracts';
import { waitFor } from '@checkout/testing';
import { ENDPOINTS, KnownEntities, unknownRoute } from '../src/endpoints';
import { FuzzService, RawRequest, badAnswer, describeRequest, send } from '../src/http';
import { TableWatch } from '../src/db';
import { checkProperty } from '../src/runner';

/** Tables written at rest by background work, not by requests (Debezium's heartbeat row). */
const BACKGROUND_TABLES = ['debezium_heartbeat'];

/** How old the previous case's reading of the tables may be to serve as this case's "before". */
const MARKS_MAX_AGE_MS = 250;

/** Cases per property in CI (FUZZ_RUNS for a deep run): each endpoint, and each service's unknown routes. */
const RUNS_PER_ENDPOINT = 12;
const RUNS_PER_UNKNOWN_ROUTES = 8;

const ACME = { authorization: 'Bearer acme-dev-key', 'content-type': 'application/json' };

async function ok(req: RawRequest, status: number): Promise<unknown> {
  const answer = await send(req);
  assert.equal(answer.status, status, `${describeRequest(req)} answered ${answer.status}: ${answer.text}`);
  return answer.json;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/** Waits until an order's saga has ended (a terminal status), so that it writes nothing more. */
async function settled(orderId: string, authorization = ACME.authorization): Promise<void> {
  await waitFor(
    `order ${orderId} terminal`,
    async () => {
      const answer = await send({
        service: 'order',
        method: 'GET',
        path: `/v1/orders/${orderId}`,
        headers: { authorization },
      });
      const status = (answer.json as { status?: string } | undefined)?.status;
      return status !== undefined && isTerminalStatus(status);
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

/**
 * Issue 18, scenario 5: random requests to every HTTP endpoint of every service (bodies, headers, sizes,
 * encodings, tenants, path and query parameters). Each answer is a 2xx or a 4xx with `{ error, message }`,
 * never a 5xx, and a 4xx wrote no row in the service's database (every table's row count and newest xmin
 * unchanged). FUZZ_RUNS sets the cases per endpoint, FUZZ_SEED replays a failure.
 */
describe('fuzz: every HTTP endpoint answers bad input with a 4xx and changes nothing', () => {
  const watches = new Map<FuzzService, TableWatch>();
  const known: KnownEntities = {
    sku: `FUZZ-${randomBytes(4).toString('hex').toUpperCase()}`,
    orderId: '',
    voucherCode: `FUZZ${randomBytes(3).toString('hex').toUpperCase()}`,
  };
  let knobs: unknown;

  beforeAll(async () => {
    await ok(
      {
        service: 'inventory',
        method: 'PUT',
        path: `/v1/admin/stock/${known.sku}`,
        headers: ACME,
        body: json({ available: 5 }),
      },
      200,
    );
    await ok(
      {
        service: 'order',
        method: 'PUT',
        path: `/v1/admin/prices/${known.sku}`,
        headers: ACME,
        body: json({ unitPrice: 50_000, currency: 'VND' }),
      },
      200,
    );
    await ok(
      {
        service: 'order',
        method: 'POST',
        path: '/v1/admin/vouchers',
        headers: ACME,
        body: json({ code: known.voucherCode, percentOff: 10, maxRedemptions: 5 }),
      },
      201,
    );
    const placed = (await ok(
      {
        service: 'order',
        method: 'POST',
        path: '/v1/checkout',
        headers: { ...ACME, 'idempotency-key': randomUUID() },
        body: json({
          customerId: 'fuzz-customer',
          currency: 'VND',
          lines: [{ sku: known.sku, quantity: 1 }],
          payment: { token: 'tok_success' },
        }),
      },
      202,
    )) as { orderId: string };
    known.orderId = placed.orderId;
    await settled(placed.orderId);
    knobs = await ok({ service: 'psp-simulator', method: 'GET', path: '/v1/_admin/knobs', headers: {} }, 200);
    for (const s of DB_SERVICES) watches.set(s.name, await TableWatch.open(s.database, BACKGROUND_TABLES));
  });

  afterAll(async () => {
    if (knobs)
      await send({
        service: 'psp-simulator',
        method: 'PUT',
        path: '/v1/_admin/knobs',
        headers: { 'content-type': 'application/json' },
        body: json(knobs),
      });
    for (const w of watches.values()) await w.close();
  });

  /** One case: the answer's status and shape, and (on a 4xx) no table of the service written. */
  async function probe(req: RawRequest): Promise<void> {
    const watch = watches.get(req.service);
    const before = watch ? await watch.recent(MARKS_MAX_AGE_MS) : undefined;
    const answer = await send(req);
    // A body far over the limit may be refused before it is read: the connection closes, nothing is done.
    if (answer.status === 0 && (req.body?.length ?? 0) > 64 * 1024) return;
    const problem = badAnswer(answer, req.method);
    if (problem) assert.fail(`${describeRequest(req)}\n${problem}`);
    if (!watch || !before) return;
    if (answer.status >= 400) {
      const changed = TableWatch.changed(before, await watch.marks());
      if (changed.length === 0) return;
      // Background work of earlier specs (a reservation expiring, a late webhook) may write in the same few
      // milliseconds: once the database is at rest again, the same request must write again to count as guilty.
      const rest = await watch.quiet();
      const again = await send(req);
      const confirmed = TableWatch.changed(rest, await watch.marks());
      if (again.status >= 400 && confirmed.length === 0) {
        console.warn(`not confirmed (background write?): ${describeRequest(req)}: ${changed.join(', ')}`);
        return;
      }
      assert.deepEqual(confirmed, [], `${describeRequest(req)} answered ${answer.status} but wrote rows`);
    } else if (req.method !== 'GET') {
      // An accepted write may start a saga: let it end so that the next case starts at rest.
      const orderId = (answer.json as { orderId?: unknown } | undefined)?.orderId;
      if (req.path === '/v1/checkout' && typeof orderId === 'string')
        await settled(orderId, req.headers.authorization);
      await watch.quiet();
    }
  }

  for (const endpoint of ENDPOINTS) {
    it(`${endpoint.method} ${endpoint.service} ${endpoint.route}`, async () => {
      await watches.get(endpoint.service)?.quiet();
      await checkProperty(
        `${endpoint.method} ${endpoint.route}`,
        fc.asyncProperty(endpoint.request(known), probe),
        RUNS_PER_ENDPOINT,
      );
    });
  }

  for (const service of [
    'order',
    'inventory',
    'payment',
    'fulfillment',
    'saga-tracker',
    'psp-simulator',
  ] as const) {
    it(`unknown routes and methods of ${service}`, async () => {
      await checkProperty(
        `${service} unknown routes`,
        fc.asyncProperty(unknownRoute(service), probe),
        RUNS_PER_UNKNOWN_ROUTES,
      );
    });
  }
});
