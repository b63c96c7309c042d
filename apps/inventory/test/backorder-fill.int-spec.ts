import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { RepairDriftHandler } from '../src/reservation/commands';
import { eventsOf, expire, givenStock, inTx, order, stockOf, uniqueSku } from './support';
import { inventorySpec } from './inventory-spec';

describe('a restock fills the open backorders of its SKU, oldest first', () => {
  const spec = inventorySpec(5);
  const { tenantId, reserve, commit, expireJob, setStock } = spec;
  const restock = (sku: string, available: number) =>
    inTx(spec.ds, (tx) => setStock.execute(tx, { tenantId, sku, available }));
  const backordersOf = async (orderId: string) =>
    (await spec.ds.query(
      `SELECT sku, qty, status FROM backorder WHERE tenant_id = $1 AND order_id = $2 ORDER BY sku`,
      [tenantId, orderId],
    )) as { sku: string; qty: number; status: string }[];

  /**
   * Given these orders paid after their reservations expired and someone else took the stock meanwhile:
   * each one is backordered, in the order given.
   */
  async function givenBackordered(orders: ReturnType<typeof order>[]): Promise<void> {
    for (const o of orders)
      assert.equal(
        (await inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId, order: o }))).outcome,
        'reserved',
      );
    const skus = [...new Set(orders.flatMap((o) => o.lines.map((l) => l.sku)))];
    for (const o of orders) await expire(spec.ds, o.orderId);
    await inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus }));
    for (const sku of skus) {
      const { available } = (await stockOf(spec.ds, sku))!;
      const blocker = order([[sku, available]]);
      assert.equal(
        (await inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId, order: blocker }))).outcome,
        'reserved',
      );
    }
    for (const o of orders) {
      const paid = await inTx(spec.ds, (tx) => commit.execute(tx, { tenantId, orderId: o.orderId }));
      assert.equal(paid.kind, 'backordered');
    }
  }

  it('fills whole backorders in order while the units cover them; a later small one does not overtake', async () => {
    const sku = uniqueSku('bo-fifo');
    await givenStock(spec.ds, sku, 6, { allowBackorder: true });
    const [o1, o2, o3, o4] = [order([[sku, 2]]), order([[sku, 1]]), order([[sku, 2]]), order([[sku, 1]])];
    await givenBackordered([o1, o2, o3, o4]);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 6, sold: 0, restocked: 6 });

    const first = await restock(sku, 4); // o1 (2) + o2 (1) = 3; o3 needs 2 of the 1 left: it waits, o4 waits behind it

    assert.deepEqual(first.backorders, {
      filled: [
        { orderId: o1.orderId, quantity: 2 },
        { orderId: o2.orderId, quantity: 1 },
      ],
      completedOrders: [o1.orderId, o2.orderId].sort(),
    });
    assert.deepEqual(
      { available: first.available, reserved: first.reserved, sold: first.sold, restocked: first.restocked },
      { available: 1, reserved: 6, sold: 3, restocked: 10 },
    );
    for (const o of [o1, o2]) {
      const events = await eventsOf(spec.ds, o.orderId);
      assert.deepEqual(events.at(-1), {
        type: 'inventory.committed',
        payload: { orderId: o.orderId, lines: [{ sku, quantity: o.lines[0].quantity }], reReserved: true },
      });
      assert.deepEqual(await backordersOf(o.orderId), [
        { sku, qty: o.lines[0].quantity, status: 'fulfilled' },
      ]);
    }
    assert.equal((await eventsOf(spec.ds, o3.orderId)).at(-1)!.type, 'inventory.backordered');
    assert.equal((await backordersOf(o4.orderId))[0].status, 'open');

    const shrink = await restock(sku, 0);
    assert.deepEqual(shrink.backorders.filled, [], 'lowering available fills nothing');

    const second = await restock(sku, 3); // o3 (2) + o4 (1)
    assert.deepEqual(
      second.backorders.filled.map((f) => f.orderId),
      [o3.orderId, o4.orderId],
    );
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 6, sold: 6, restocked: 12 });
    assert.deepEqual(
      (await restock(sku, 5)).backorders.filled,
      [],
      'a filled backorder is never filled twice',
    );

    const drift = await new RepairDriftHandler().execute(spec.ds, { tenantId, skus: [sku], dryRun: true });
    assert.deepEqual(drift, [], 'the reservation ledger agrees with sold: the drift job leaves it alone');
  });

  it('an order owed on two SKUs gets inventory.committed only once both are filled, naming both lines', async () => {
    const a = uniqueSku('bo-a');
    const b = uniqueSku('bo-b');
    await givenStock(spec.ds, a, 1, { allowBackorder: true });
    await givenStock(spec.ds, b, 2, { allowBackorder: true });
    const o = order([
      [a, 1],
      [b, 2],
    ]);
    await givenBackordered([o]);

    const partly = await restock(a, 1);
    assert.deepEqual(partly.backorders, {
      filled: [{ orderId: o.orderId, quantity: 1 }],
      completedOrders: [],
    });
    assert.equal((await eventsOf(spec.ds, o.orderId)).at(-1)!.type, 'inventory.backordered');

    const rest = await restock(b, 2);
    assert.deepEqual(rest.backorders.completedOrders, [o.orderId]);
    assert.deepEqual((await eventsOf(spec.ds, o.orderId)).at(-1), {
      type: 'inventory.committed',
      payload: {
        orderId: o.orderId,
        lines: [
          { sku: a, quantity: 1 },
          { sku: b, quantity: 2 },
        ].sort((x, y) => (x.sku < y.sku ? -1 : 1)),
        reReserved: true,
      },
    });
    for (const sku of [a, b]) {
      const s = (await stockOf(spec.ds, sku))!;
      assert.equal(s.restocked, s.available + s.reserved + s.sold, `conservation of ${sku}`);
    }
  });
});
