import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { pgCode } from '../src/reservation/database/sql';
import {
  TEST_TENANT,
  eventsOf,
  expire,
  givenStock,
  inTx,
  order,
  reservationsOf,
  stockOf,
  uniqueSku,
  givenCrossedOrders,
} from './support';
import { inventorySpec } from './inventory-spec';

describe('ReserveStock against the inventory database', () => {
  const spec = inventorySpec(50);
  const { reserve } = spec;
  const run = (o: ReturnType<typeof order>) =>
    inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId: TEST_TENANT, order: o }));

  it('540 concurrent reservations for 500 units (pool of 50): exactly 500 held, 40 rejected', async () => {
    const sku = uniqueSku('flash');
    await givenStock(spec.ds, sku, 500);
    const orders = Array.from({ length: 540 }, () => order([[sku, 1]]));

    const results = await Promise.all(orders.map(run));

    const reserved = results.filter((r) => r.outcome === 'reserved').length;
    const rejected = results.filter((r) => r.outcome === 'rejected').length;
    assert.equal(reserved, 500);
    assert.equal(rejected, 40);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 500, sold: 0, restocked: 500 });
    const [{ held }] = await spec.ds.query(
      `SELECT count(*)::int AS held FROM reservation WHERE tenant_id = $1 AND sku = $2 AND status = 'held'`,
      [TEST_TENANT, sku],
    );
    assert.equal(held, 500);
    const [{ types }] = await spec.ds.query(
      `SELECT jsonb_object_agg(type, n) AS types FROM (
         SELECT type, count(*)::int AS n FROM outbox WHERE saga_id = ANY($1::uuid[]) GROUP BY type) t`,
      [orders.map((o) => o.orderId)],
    );
    assert.deepEqual(types, { 'inventory.reserved': 500, 'inventory.rejected': 40 });
  });

  it('each line holds for its own SKU TTL (default when the SKU has none); the event names the first to lapse', async () => {
    const short = uniqueSku('ttl-short');
    const long = uniqueSku('ttl-long');
    const plain = uniqueSku('ttl-default');
    await givenStock(spec.ds, short, 5, { reservationTtlSeconds: 30 });
    await givenStock(spec.ds, long, 5, { reservationTtlSeconds: 3_600 });
    await givenStock(spec.ds, plain, 5);
    const o = order([
      [long, 1],
      [plain, 1],
      [short, 1],
    ]);

    assert.equal((await run(o)).outcome, 'reserved');

    const rows: { sku: string; ttl: number; expiresAt: Date }[] = await spec.ds.query(
      `SELECT sku, round(extract(epoch FROM expires_at - created_at))::int AS ttl, expires_at AS "expiresAt"
         FROM reservation WHERE order_id = $1`,
      [o.orderId],
    );
    const ttlBySku = Object.fromEntries(rows.map((r) => [r.sku, r.ttl]));
    assert.deepEqual(ttlBySku, { [short]: 30, [long]: 3_600, [plain]: 600 });
    const [reserved] = await eventsOf(spec.ds, o.orderId);
    assert.equal(reserved.type, 'inventory.reserved');
    assert.equal(reserved.payload.expiresAt, rows.find((r) => r.sku === short)!.expiresAt.toISOString());
  });

  it('the database refuses a write that would take available below zero (CHECK)', async () => {
    const sku = uniqueSku('check');
    await givenStock(spec.ds, sku, 3);
    await assert.rejects(
      spec.ds.query(`UPDATE stock SET available = available - 4 WHERE tenant_id = $1 AND sku = $2`, [
        TEST_TENANT,
        sku,
      ]),
      (e: unknown) => pgCode(e) === '23514',
    );
    await assert.rejects(
      spec.ds.query(`UPDATE stock SET reserved = reserved - 1 WHERE tenant_id = $1 AND sku = $2`, [
        TEST_TENANT,
        sku,
      ]),
      (e: unknown) => pgCode(e) === '23514',
    );
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 0, sold: 0, restocked: 3 });
  });

  it('multi-line orders with the same SKUs in opposite order, concurrently: no deadlock, stock conserved', async () => {
    const { a, b, orders } = await givenCrossedOrders(spec.ds, 'pair', 100, 120);

    const settled = await Promise.allSettled(orders.map(run));

    const failures = settled.filter((s) => s.status === 'rejected');
    assert.deepEqual(failures, [], 'no error (deadlock or other) reaches the caller');
    const outcomes = settled.map((s) => (s.status === 'fulfilled' ? s.value.outcome : 'error'));
    assert.equal(outcomes.filter((o) => o === 'reserved').length, 100);
    assert.equal(outcomes.filter((o) => o === 'rejected').length, 20);
    for (const sku of [a, b]) {
      assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 100, sold: 0, restocked: 100 });
    }
  });

  it('all or nothing: one short line rejects the order, names the short SKU and holds nothing', async () => {
    const plenty = uniqueSku('plenty');
    const scarce = uniqueSku('scarce');
    await givenStock(spec.ds, plenty, 10);
    await givenStock(spec.ds, scarce, 1);
    const o = order([
      [plenty, 2],
      [scarce, 2],
    ]);

    const result = await run(o);

    assert.deepEqual(result, { outcome: 'rejected', shortSkus: [scarce], reason: 'insufficient_stock' });
    assert.deepEqual(await stockOf(spec.ds, plenty), { available: 10, reserved: 0, sold: 0, restocked: 10 });
    assert.deepEqual(await reservationsOf(spec.ds, o.orderId), []);
    const events = await eventsOf(spec.ds, o.orderId);
    assert.deepEqual(
      events.map((e) => [e.type, e.payload.shortSkus, e.payload.reason]),
      [['inventory.rejected', [scarce], 'insufficient_stock']],
    );
  });

  it('an unknown SKU rejects the order with reason unknown_sku', async () => {
    const known = uniqueSku('known');
    const unknown = uniqueSku('nope');
    await givenStock(spec.ds, known, 5);
    const o = order([
      [known, 1],
      [unknown, 1],
    ]);

    assert.deepEqual(await run(o), { outcome: 'rejected', shortSkus: [unknown], reason: 'unknown_sku' });
    assert.deepEqual(await stockOf(spec.ds, known), { available: 5, reserved: 0, sold: 0, restocked: 5 });
  });

  it('inventory.reserved carries everything payment needs', async () => {
    const sku = uniqueSku('fat');
    await givenStock(spec.ds, sku, 5);
    const o = order([
      [sku, 1],
      [sku, 2],
    ]);

    const result = await run(o);

    assert.equal(result.outcome, 'reserved');
    const [event] = await eventsOf(spec.ds, o.orderId);
    assert.equal(event.type, 'inventory.reserved');
    assert.deepEqual(event.payload.lines, [{ sku, quantity: 3 }]);
    assert.equal(event.payload.amount, o.total);
    assert.equal(event.payload.currency, o.currency);
    assert.equal(event.payload.customerId, o.customerId);
    assert.equal(event.payload.paymentToken, o.paymentToken);
    const ttl = Date.parse(event.payload.expiresAt as string) - Date.now();
    assert.ok(ttl > 590_000 && ttl <= 600_000, `expiresAt about 10 minutes ahead, got ${ttl} ms`);
  });

  it('the same order twice holds its stock once', async () => {
    const sku = uniqueSku('dup');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 2]]);

    const results = await Promise.allSettled([run(o), run(o)]);
    const retried = await run(o);

    const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value.outcome : 'error'));
    assert.ok(outcomes.includes('reserved'));
    assert.equal(retried.outcome, 'duplicate');
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 2, sold: 0, restocked: 5 });
  });

  it("the same order id under two tenants is two orders: each holds its own tenant's stock", async () => {
    const sku = uniqueSku('tenants');
    const other = `${TEST_TENANT}-b`;
    await givenStock(spec.ds, sku, 5);
    await givenStock(spec.ds, sku, 5, { tenantId: other });
    const o = order([[sku, 2]]);
    assert.equal((await run(o)).outcome, 'reserved');
    const theirs = await inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId: other, order: o }));
    assert.equal(theirs.outcome, 'reserved');
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 2, sold: 0, restocked: 5 });
    assert.deepEqual(await stockOf(spec.ds, sku, other), {
      available: 3,
      reserved: 2,
      sold: 0,
      restocked: 5,
    });
  });

  it('lazy expiry: a hold past its TTL on a short SKU is released and the stock goes to the new order', async () => {
    const sku = uniqueSku('lazy');
    await givenStock(spec.ds, sku, 1);
    const first = order([[sku, 1]]);
    const second = order([[sku, 1]]);
    assert.equal((await run(first)).outcome, 'reserved');
    await expire(spec.ds, first.orderId);

    assert.equal((await run(second)).outcome, 'reserved');

    assert.deepEqual(
      (await reservationsOf(spec.ds, first.orderId)).map((r) => [r.status, r.releaseReason]),
      [['released', 'expired']],
    );
    assert.deepEqual(
      (await eventsOf(spec.ds, first.orderId)).map((e) => [e.type, e.payload.reason]),
      [
        ['inventory.reserved', undefined],
        ['inventory.released', 'expired'],
      ],
    );
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 1, sold: 0, restocked: 1 });
  });
});
