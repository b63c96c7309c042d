import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { eventsOf, expire, givenStock, inTx, order, reservationsOf, stockOf, uniqueSku } from './support';
import { inventorySpec } from './inventory-spec';

describe('ReleaseStockHandler and ExpireReservationsHandler', () => {
  const spec = inventorySpec(20);
  const { tenantId, commit, release, expireJob, reserved } = spec;

  it('payment.failed releases the held stock once; a second release changes nothing', async () => {
    const sku = uniqueSku('rel');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);

    const first = await inTx(spec.ds, (tx) =>
      release.execute(tx, { tenantId, orderId: o.orderId, reason: 'payment_failed' }),
    );
    const second = await inTx(spec.ds, (tx) =>
      release.execute(tx, { tenantId, orderId: o.orderId, reason: 'order_cancelled' }),
    );

    assert.deepEqual(first, [{ sku, quantity: 2 }]);
    assert.deepEqual(second, []);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 5, reserved: 0, sold: 0, restocked: 5 });
    assert.deepEqual(
      (await eventsOf(spec.ds, o.orderId)).map((e) => [e.type, e.payload.reason]),
      [
        ['inventory.reserved', undefined],
        ['inventory.released', 'payment_failed'],
      ],
    );
  });

  it('order.cancelled after payment leaves committed stock sold', async () => {
    const sku = uniqueSku('paid');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 1]]);
    await reserved(o);
    await inTx(spec.ds, (tx) => commit.execute(tx, { tenantId, orderId: o.orderId }));

    const released = await inTx(spec.ds, (tx) =>
      release.execute(tx, { tenantId, orderId: o.orderId, reason: 'order_cancelled' }),
    );

    assert.deepEqual(released, []);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 4, reserved: 0, sold: 1, restocked: 5 });
  });

  it('the expiry job run twice concurrently returns each expired reservation exactly once', async () => {
    const sku = uniqueSku('ttl');
    await givenStock(spec.ds, sku, 60);
    const orders = Array.from({ length: 50 }, () => order([[sku, 1]]));
    for (const o of orders) await reserved(o);
    const keeper = order([[sku, 3]]);
    await reserved(keeper);
    await spec.ds.query(
      `UPDATE reservation SET expires_at = now() - interval '1 second' WHERE order_id = ANY($1::uuid[])`,
      [orders.map((o) => o.orderId)],
    );

    const runs = await Promise.all([
      inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku] })),
      inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku] })),
    ]);
    const again = await inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku] }));

    const releasedOrders = runs.flat().map((r) => r.orderId);
    assert.equal(releasedOrders.length, 50);
    assert.equal(new Set(releasedOrders).size, 50, 'no reservation released by both runs');
    assert.deepEqual(again, []);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 57, reserved: 3, sold: 0, restocked: 60 });
    const [{ n }] = await spec.ds.query(
      `SELECT count(*)::int AS n FROM outbox WHERE type = 'inventory.released' AND saga_id = ANY($1::uuid[])
          AND payload->'payload'->>'reason' = 'expired'`,
      [orders.map((o) => o.orderId)],
    );
    assert.equal(n, 50, 'one inventory.released per order');
    assert.deepEqual(
      (await reservationsOf(spec.ds, keeper.orderId)).map((r) => r.status),
      ['held'],
      'a reservation inside its TTL stays held',
    );
  });

  it('the expiry job and a compensation racing on the same order return the stock once', async () => {
    const sku = uniqueSku('race');
    await givenStock(spec.ds, sku, 20);
    const orders = Array.from({ length: 20 }, () => order([[sku, 1]]));
    for (const o of orders) await reserved(o);
    for (const o of orders) await expire(spec.ds, o.orderId);

    await Promise.all([
      inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku] })),
      ...orders.map((o) =>
        inTx(spec.ds, (tx) =>
          release.execute(tx, { tenantId, orderId: o.orderId, reason: 'payment_failed' }),
        ),
      ),
    ]);

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 20, reserved: 0, sold: 0, restocked: 20 });
    for (const o of orders) {
      const released = (await eventsOf(spec.ds, o.orderId)).filter((e) => e.type === 'inventory.released');
      assert.equal(released.length, 1, `order ${o.orderId} released once`);
    }
  });
});
