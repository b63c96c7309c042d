import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { serviceDataSource } from '@checkout/testing';
import {
  CommitStock,
  ExpireReservations,
  ReleaseStock,
  ReserveStock,
  ReturnSoldStock,
} from '../src/reservation/commands';
import {
  TEST_TENANT,
  eventsOf,
  expire,
  givenStock,
  inTx,
  order,
  outbox,
  reservationsOf,
  stockOf,
  uniqueSku,
} from './support';

describe('CommitStock on payment.succeeded, and the after-expiry policy', () => {
  let ds: DataSource;
  const tenantId = TEST_TENANT;
  const reserve = new ReserveStock(outbox, { ttlSeconds: 600 });
  const commit = new CommitStock(outbox);
  const release = new ReleaseStock(outbox);
  const expireJob = new ExpireReservations(outbox);
  const returnSold = new ReturnSoldStock();
  const reserved = async (o: ReturnType<typeof order>) => {
    assert.equal((await inTx(ds, (tx) => reserve.execute(tx, { tenantId, order: o }))).outcome, 'reserved');
  };
  const pay = (orderId: string) => inTx(ds, (tx) => commit.execute(tx, { tenantId, orderId }));
  /** The order's reservation ran out and the job released it. */
  const expiredAndReleased = async (orderId: string, skus: string[]) => {
    await expire(ds, orderId);
    await inTx(ds, (tx) => expireJob.execute(tx, { tenantId, skus }));
  };
  const lastEvent = async (orderId: string) => (await eventsOf(ds, orderId)).at(-1)!;

  before(async () => {
    ds = await serviceDataSource('inventory_svc', 20);
  });
  after(async () => {
    await ds.destroy();
  });

  it('held -> committed: reserved units become sold, inventory.committed reReserved=false', async () => {
    const sku = uniqueSku('commit');
    await givenStock(ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);

    assert.deepEqual(await pay(o.orderId), { kind: 'committed', reReserved: false });

    assert.deepEqual(await stockOf(ds, sku), { available: 3, reserved: 0, sold: 2, restocked: 5 });
    assert.deepEqual(await lastEvent(o.orderId), {
      type: 'inventory.committed',
      payload: { orderId: o.orderId, lines: [{ sku, quantity: 2 }], reReserved: false },
    });
  });

  it('a duplicate payment.succeeded (sequential or concurrent) commits once', async () => {
    const sku = uniqueSku('dup-pay');
    await givenStock(ds, sku, 5);
    const o = order([[sku, 1]]);
    await reserved(o);

    const concurrent = await Promise.all([pay(o.orderId), pay(o.orderId)]);
    const later = await pay(o.orderId);

    assert.deepEqual(concurrent.map((r) => r.kind).sort(), ['committed', 'duplicate']);
    assert.deepEqual(later, { kind: 'duplicate' });
    assert.deepEqual(await stockOf(ds, sku), { available: 4, reserved: 0, sold: 1, restocked: 5 });
    const committed = (await eventsOf(ds, o.orderId)).filter((e) => e.type === 'inventory.committed');
    assert.equal(committed.length, 1);
  });

  it('paid after expiry, stock still there: re-reserved and committed (reReserved=true)', async () => {
    const sku = uniqueSku('rereserve');
    await givenStock(ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);
    await expiredAndReleased(o.orderId, [sku]);
    assert.deepEqual(await stockOf(ds, sku), { available: 5, reserved: 0, sold: 0, restocked: 5 });

    assert.deepEqual(await pay(o.orderId), { kind: 'committed', reReserved: true });

    assert.deepEqual(await stockOf(ds, sku), { available: 3, reserved: 0, sold: 2, restocked: 5 });
    assert.deepEqual((await lastEvent(o.orderId)).payload.reReserved, true);
    assert.deepEqual(
      (await reservationsOf(ds, o.orderId)).map((r) => [r.status, r.paymentOutcome]),
      [['committed', 're_reserved']],
    );
  });

  it('paid after expiry, stock gone, SKU allows backorder: backorder recorded, inventory.backordered', async () => {
    const sku = uniqueSku('backorder');
    await givenStock(ds, sku, 1, { allowBackorder: true });
    const late = order([[sku, 1]]);
    await reserved(late);
    await expiredAndReleased(late.orderId, [sku]);
    await reserved(order([[sku, 1]])); // the last unit went to someone else

    assert.deepEqual(await pay(late.orderId), { kind: 'backordered', backordered: [{ sku, quantity: 1 }] });

    assert.deepEqual(await stockOf(ds, sku), { available: 0, reserved: 1, sold: 0, restocked: 1 });
    assert.deepEqual(await lastEvent(late.orderId), {
      type: 'inventory.backordered',
      payload: { orderId: late.orderId, lines: [{ sku, quantity: 1 }] },
    });
    const backorders = await ds.query(
      `SELECT sku, qty, status FROM backorder WHERE tenant_id = $1 AND order_id = $2`,
      [tenantId, late.orderId],
    );
    assert.deepEqual(backorders, [{ sku, qty: 1, status: 'open' }]);
    assert.deepEqual(await pay(late.orderId), { kind: 'duplicate' });
  });

  it('paid after expiry, stock gone, no backorder: nothing sold, inventory.unavailable-after-payment', async () => {
    const sku = uniqueSku('refund');
    await givenStock(ds, sku, 1);
    const late = order([[sku, 1]]);
    await reserved(late);
    await expiredAndReleased(late.orderId, [sku]);
    await reserved(order([[sku, 1]]));

    assert.deepEqual(await pay(late.orderId), { kind: 'unavailable', shortSkus: [sku] });

    assert.deepEqual(await stockOf(ds, sku), { available: 0, reserved: 1, sold: 0, restocked: 1 });
    assert.deepEqual(await lastEvent(late.orderId), {
      type: 'inventory.unavailable-after-payment',
      payload: { orderId: late.orderId, lines: [{ sku, quantity: 1 }], shortSkus: [sku] },
    });
    assert.deepEqual(
      await pay(late.orderId),
      { kind: 'duplicate' },
      'stock coming back later does not flip the refund',
    );
  });

  it('mixed order: one line still held, one expired and gone: nothing sold, the held line is released on cancel', async () => {
    const kept = uniqueSku('kept');
    const gone = uniqueSku('gone');
    await givenStock(ds, kept, 5);
    await givenStock(ds, gone, 1);
    const o = order([
      [kept, 1],
      [gone, 1],
    ]);
    await reserved(o);
    // only the `gone` line expired and was released
    await ds.query(
      `UPDATE reservation SET expires_at = now() - interval '1 second' WHERE order_id = $1 AND sku = $2`,
      [o.orderId, gone],
    );
    await inTx(ds, (tx) => expireJob.execute(tx, { tenantId, skus: [gone] }));
    await reserved(order([[gone, 1]]));

    assert.deepEqual(await pay(o.orderId), { kind: 'unavailable', shortSkus: [gone] });
    assert.deepEqual(await stockOf(ds, kept), { available: 4, reserved: 1, sold: 0, restocked: 5 });

    await inTx(ds, (tx) => release.execute(tx, { tenantId, orderId: o.orderId, reason: 'order_cancelled' }));
    assert.deepEqual(await stockOf(ds, kept), { available: 5, reserved: 0, sold: 0, restocked: 5 });
  });

  it('fulfillment.shipment-failed returns the sold units once', async () => {
    const sku = uniqueSku('ship');
    await givenStock(ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);
    await pay(o.orderId);

    const first = await inTx(ds, (tx) => returnSold.execute(tx, { tenantId, orderId: o.orderId }));
    const second = await inTx(ds, (tx) => returnSold.execute(tx, { tenantId, orderId: o.orderId }));

    assert.deepEqual(first, [{ sku, quantity: 2 }]);
    assert.deepEqual(second, []);
    assert.deepEqual(await stockOf(ds, sku), { available: 5, reserved: 0, sold: 0, restocked: 5 });
  });

  it('payment for an order inventory never held says so (the consumer parks it)', async () => {
    assert.deepEqual(await pay(order([['NOPE', 1]]).orderId), { kind: 'no_reservation' });
  });
});
