import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { InboxTransport, NonRetryableError } from '@checkout/messaging';
import { ReserveStockHandler } from '../src/reservation/commands';
import {
  TEST_TENANT,
  eventsOf,
  givenStock,
  inTx,
  order,
  orderCreatedEvent,
  outbox,
  reservationsOf,
  stockOf,
  uniqueSku,
  givenCrossedOrders,
} from './support';
import { inventorySpec, inventoryTransport } from './inventory-spec';

/** Splits xs into chunks of n. */
const chunks = <T>(xs: T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

describe('ReserveStockHandler and the batched order.created consumer (group commit)', () => {
  const spec = inventorySpec(20);
  const batch = new ReserveStockHandler(outbox, { INVENTORY_RESERVATION_TTL_SECONDS: 600 });
  let transport: InboxTransport;
  const consumer = {
    apply: (events: ReturnType<typeof orderCreatedEvent>[]) => transport.apply('order.created', events),
  };

  beforeAll(async () => {
    // Its own inbox name: the running service's inbox never sees these event ids.
    transport = inventoryTransport(spec.ds, spec.consumer, 'it-inventory-batch');
  });
  afterAll(async () => {});

  it('one batch, mixed: first fit in batch order, each order all lines or none, unknown SKUs named', async () => {
    const a = uniqueSku('mix-a');
    const b = uniqueSku('mix-b');
    await givenStock(spec.ds, a, 5);
    await givenStock(spec.ds, b, 2);
    const orders = [
      order([[a, 2]]),
      order([[a, 2]]),
      order([[a, 2]]), // 1 left: short
      order([
        [b, 3], // short: the whole order is refused, its unit of a stays free
        [a, 1],
      ]),
      order([[a, 1]]), // takes the unit the order before could not
      order([[uniqueSku('mix-none'), 1]]),
    ];

    const results = await inTx(spec.ds, (tx) =>
      batch.execute(
        tx,
        orders.map((o) => ({ tenantId: TEST_TENANT, order: o })),
      ),
    );

    assert.deepEqual(
      results.map((r) => (r.outcome === 'rejected' ? [r.outcome, r.reason, r.shortSkus] : [r.outcome])),
      [
        ['reserved'],
        ['reserved'],
        ['rejected', 'insufficient_stock', [a]],
        ['rejected', 'insufficient_stock', [b]],
        ['reserved'],
        ['rejected', 'unknown_sku', [orders[5].lines[0].sku]],
      ],
    );
    assert.deepEqual(await stockOf(spec.ds, a), { available: 0, reserved: 5, sold: 0, restocked: 5 });
    assert.deepEqual(await stockOf(spec.ds, b), { available: 2, reserved: 0, sold: 0, restocked: 2 });
    assert.deepEqual(await reservationsOf(spec.ds, orders[3].orderId), []);
    const types = await Promise.all(
      orders.map(async (o) => (await eventsOf(spec.ds, o.orderId)).map((e) => e.type)),
    );
    assert.deepEqual(types, [
      ['inventory.reserved'],
      ['inventory.reserved'],
      ['inventory.rejected'],
      ['inventory.rejected'],
      ['inventory.reserved'],
      ['inventory.rejected'],
    ]);
    const sequences: { n: number }[] = await spec.ds.query(
      `SELECT sequence AS n FROM outbox WHERE saga_id = ANY($1::uuid[])`,
      [orders.map((o) => o.orderId)],
    );
    assert.deepEqual(
      sequences.map((r) => r.n),
      orders.map(() => 1),
      "each order's event is the first of its saga",
    );
  });

  it('a duplicate order.created inside one batch (same event, or same order under a new event id) holds once', async () => {
    const sku = uniqueSku('batch-dup');
    await givenStock(spec.ds, sku, 10);
    const o = order([[sku, 3]]);
    const first = orderCreatedEvent(o);
    const again = orderCreatedEvent(o);
    const other = orderCreatedEvent(order([[sku, 1]]));

    const outcome = await consumer.apply([first, first, again, other]);

    assert.deepEqual(outcome, { applied: 3, duplicates: 1 });
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 6, reserved: 4, sold: 0, restocked: 10 });
    assert.deepEqual(
      (await reservationsOf(spec.ds, o.orderId)).map((r) => [r.qty, r.status]),
      [[3, 'held']],
    );
    assert.deepEqual(
      (await eventsOf(spec.ds, o.orderId)).map((e) => e.type),
      ['inventory.reserved'],
    );
    assert.deepEqual(
      await consumer.apply([first, other]),
      { applied: 0, duplicates: 2 },
      'a redelivery does nothing',
    );
  });

  it('a broken rule fails the whole chunk and changes nothing (the consumer then applies each event alone)', async () => {
    const sku = uniqueSku('batch-rule');
    await givenStock(spec.ds, sku, 5_000);
    const fine = orderCreatedEvent(order([[sku, 1]]));
    const tooLarge = orderCreatedEvent(
      order([
        [sku, 600],
        [sku, 600],
      ]),
    );
    const unknownTenant = orderCreatedEvent(order([[sku, 1]]), 'no-such-tenant');

    for (const bad of [tooLarge, unknownTenant]) {
      await assert.rejects(consumer.apply([fine, bad]), (e: unknown) => e instanceof NonRetryableError);
    }

    assert.deepEqual(await stockOf(spec.ds, sku), {
      available: 5_000,
      reserved: 0,
      sold: 0,
      restocked: 5_000,
    });
    const [{ n }] = await spec.ds.query(`SELECT count(*)::int AS n FROM inbox WHERE event_id = $1`, [
      fine.eventId,
    ]);
    assert.equal(n, 0, 'the inbox rows roll back with the batch');
    assert.deepEqual(await consumer.apply([fine]), { applied: 1, duplicates: 0 });
  });

  it('540 orders for 500 units in concurrent batches (3 partitions) and single orders: exactly 500 held', async () => {
    const sku = uniqueSku('batch-flash');
    await givenStock(spec.ds, sku, 500);
    const orders = Array.from({ length: 540 }, () => order([[sku, 1]]));
    const batched = orders.slice(0, 450);
    const alone = orders.slice(450);
    const partitions = [0, 1, 2].map((p) => batched.filter((_, i) => i % 3 === p));

    const [batchResults, singleResults] = await Promise.all([
      Promise.all(
        partitions.map(async (mine) => {
          const out = [];
          for (const part of chunks(mine, 25)) {
            out.push(
              ...(await inTx(spec.ds, (tx) =>
                batch.execute(
                  tx,
                  part.map((o) => ({ tenantId: TEST_TENANT, order: o })),
                ),
              )),
            );
          }
          return out;
        }),
      ),
      Promise.all(
        alone.map((o) =>
          inTx(spec.ds, (tx) => spec.reserve.execute(tx, { tenantId: TEST_TENANT, order: o })),
        ),
      ),
    ]);

    const outcomes = [...batchResults.flat(), ...singleResults].map((r) => r.outcome);
    assert.equal(outcomes.filter((o) => o === 'reserved').length, 500);
    assert.equal(outcomes.filter((o) => o === 'rejected').length, 40);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 500, sold: 0, restocked: 500 });
    const [{ held }] = await spec.ds.query(
      `SELECT count(*)::int AS held FROM reservation WHERE tenant_id = $1 AND sku = $2 AND status = 'held'`,
      [TEST_TENANT, sku],
    );
    assert.equal(held, 500);
  });

  it('batches of multi-line orders with the same SKUs in opposite order, concurrently: no deadlock, conserved', async () => {
    const { a, b, orders } = await givenCrossedOrders(spec.ds, 'bpair', 100, 120);

    const settled = await Promise.allSettled(
      chunks(orders, 10).map((part) =>
        inTx(spec.ds, (tx) =>
          batch.execute(
            tx,
            part.map((o) => ({ tenantId: TEST_TENANT, order: o })),
          ),
        ),
      ),
    );

    assert.deepEqual(
      settled.filter((s) => s.status === 'rejected'),
      [],
      'no error (deadlock or other) reaches the caller',
    );
    const outcomes = settled.flatMap((s) => (s.status === 'fulfilled' ? s.value.map((r) => r.outcome) : []));
    assert.equal(outcomes.filter((o) => o === 'reserved').length, 100);
    assert.equal(outcomes.filter((o) => o === 'rejected').length, 20);
    for (const sku of [a, b]) {
      assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 100, sold: 0, restocked: 100 });
    }
  });
});
