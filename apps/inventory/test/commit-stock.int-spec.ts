import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { eventsOf, givenStock, inTx, order, reservationsOf, stockOf, uniqueSku } from './support';
import { sagaEvent } from '@checkout/testing';
import { contextOf, inventorySpec } from './inventory-spec';

describe('CommitStockHandler on payment.succeeded, and the after-expiry policy', () => {
  const spec = inventorySpec(20);
  const { tenantId, release, expireJob, returnSold, reserved, pay, expiredAndReleased, lastEvent } = spec;

  it('held -> committed: reserved units become sold, inventory.committed reReserved=false', async () => {
    const sku = uniqueSku('commit');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);

    assert.deepEqual(await pay(o.orderId), { kind: 'committed', reReserved: false });

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 0, sold: 2, restocked: 5 });
    assert.deepEqual(await lastEvent(o.orderId), {
      type: 'inventory.committed',
      payload: { orderId: o.orderId, lines: [{ sku, quantity: 2 }], reReserved: false },
    });
  });

  it('a duplicate payment.succeeded (sequential or concurrent) commits once', async () => {
    const sku = uniqueSku('dup-pay');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 1]]);
    await reserved(o);

    const concurrent = await Promise.all([pay(o.orderId), pay(o.orderId)]);
    const later = await pay(o.orderId);

    assert.deepEqual(concurrent.map((r) => r.kind).sort(), ['committed', 'duplicate']);
    assert.deepEqual(later, { kind: 'duplicate' });
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 4, reserved: 0, sold: 1, restocked: 5 });
    const committed = (await eventsOf(spec.ds, o.orderId)).filter((e) => e.type === 'inventory.committed');
    assert.equal(committed.length, 1);
  });

  it('paid after expiry, stock still there: re-reserved and committed (reReserved=true)', async () => {
    const sku = uniqueSku('rereserve');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);
    await expiredAndReleased(o.orderId, [sku]);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 5, reserved: 0, sold: 0, restocked: 5 });

    assert.deepEqual(await pay(o.orderId), { kind: 'committed', reReserved: true });

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 0, sold: 2, restocked: 5 });
    assert.deepEqual((await lastEvent(o.orderId)).payload.reReserved, true);
    assert.deepEqual(
      (await reservationsOf(spec.ds, o.orderId)).map((r) => [r.status, r.paymentOutcome]),
      [['committed', 're_reserved']],
    );
  });

  it('paid after expiry, stock gone, SKU allows backorder: backorder recorded, inventory.backordered', async () => {
    const sku = uniqueSku('backorder');
    await givenStock(spec.ds, sku, 1, { allowBackorder: true });
    const late = order([[sku, 1]]);
    await reserved(late);
    await expiredAndReleased(late.orderId, [sku]);
    await reserved(order([[sku, 1]])); // the last unit went to someone else

    assert.deepEqual(await pay(late.orderId), { kind: 'backordered', backordered: [{ sku, quantity: 1 }] });

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 1, sold: 0, restocked: 1 });
    assert.deepEqual(await lastEvent(late.orderId), {
      type: 'inventory.backordered',
      payload: { orderId: late.orderId, lines: [{ sku, quantity: 1 }] },
    });
    const backorders = await spec.ds.query(
      `SELECT sku, qty, status FROM backorder WHERE tenant_id = $1 AND order_id = $2`,
      [tenantId, late.orderId],
    );
    assert.deepEqual(backorders, [{ sku, qty: 1, status: 'open' }]);
    assert.deepEqual(await pay(late.orderId), { kind: 'duplicate' });
  });

  it('paid after expiry, stock gone, no backorder: nothing sold, inventory.unavailable-after-payment', async () => {
    const sku = uniqueSku('refund');
    await givenStock(spec.ds, sku, 1);
    const late = order([[sku, 1]]);
    await reserved(late);
    await expiredAndReleased(late.orderId, [sku]);
    await reserved(order([[sku, 1]]));

    assert.deepEqual(await pay(late.orderId), { kind: 'unavailable', shortSkus: [sku] });

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 0, reserved: 1, sold: 0, restocked: 1 });
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
    await givenStock(spec.ds, kept, 5);
    await givenStock(spec.ds, gone, 1);
    const o = order([
      [kept, 1],
      [gone, 1],
    ]);
    await reserved(o);
    // only the `gone` line expired and was released
    await spec.ds.query(
      `UPDATE reservation SET expires_at = now() - interval '1 second' WHERE order_id = $1 AND sku = $2`,
      [o.orderId, gone],
    );
    await inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [gone] }));
    await reserved(order([[gone, 1]]));

    assert.deepEqual(await pay(o.orderId), { kind: 'unavailable', shortSkus: [gone] });
    assert.deepEqual(await stockOf(spec.ds, kept), { available: 4, reserved: 1, sold: 0, restocked: 5 });

    await inTx(spec.ds, (tx) =>
      release.execute(tx, { tenantId, orderId: o.orderId, reason: 'order_cancelled' }),
    );
    assert.deepEqual(await stockOf(spec.ds, kept), { available: 5, reserved: 0, sold: 0, restocked: 5 });
  });

  /** order.cancelled as the consumer applies it (release held lines, return committed ones). */
  const cancelled = (orderId: string) =>
    inTx(spec.ds, (tx) =>
      spec.consumer.orderCancelled(
        sagaEvent('order.cancelled', tenantId, orderId, {
          orderId,
          reason: 'customer_request',
          refundIfCharged: true,
        }),
        contextOf(tx, 'order.cancelled'),
      ),
    );

  it('cancelled while the payment was unknown, then paid: nothing is sold again, the units stay available', async () => {
    const sku = uniqueSku('cancel-then-pay');
    await givenStock(spec.ds, sku, 2);
    const o = order([[sku, 1]]);
    await reserved(o);
    await cancelled(o.orderId);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 2, reserved: 0, sold: 0, restocked: 2 });

    assert.deepEqual(await pay(o.orderId), { kind: 'order_closed', reason: 'order_cancelled' });
    assert.deepEqual(await pay(o.orderId), { kind: 'order_closed', reason: 'order_cancelled' });

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 2, reserved: 0, sold: 0, restocked: 2 });
    assert.equal((await lastEvent(o.orderId)).type, 'inventory.released');
  });

  it('paid first, cancelled after (the topics race): the sold units come back once', async () => {
    const sku = uniqueSku('pay-then-cancel');
    await givenStock(spec.ds, sku, 3);
    const o = order([[sku, 2]]);
    await reserved(o);
    assert.deepEqual(await pay(o.orderId), { kind: 'committed', reReserved: false });

    await cancelled(o.orderId);
    await cancelled(o.orderId);

    assert.deepEqual(await stockOf(spec.ds, sku), { available: 3, reserved: 0, sold: 0, restocked: 3 });
  });

  it('fulfillment.shipment-failed returns the sold units once', async () => {
    const sku = uniqueSku('ship');
    await givenStock(spec.ds, sku, 5);
    const o = order([[sku, 2]]);
    await reserved(o);
    await pay(o.orderId);

    const first = await inTx(spec.ds, (tx) => returnSold.execute(tx, { tenantId, orderId: o.orderId }));
    const second = await inTx(spec.ds, (tx) => returnSold.execute(tx, { tenantId, orderId: o.orderId }));

    assert.deepEqual(first, [{ sku, quantity: 2 }]);
    assert.deepEqual(second, []);
    assert.deepEqual(await stockOf(spec.ds, sku), { available: 5, reserved: 0, sold: 0, restocked: 5 });
  });

  it('payment for an order inventory never held says so (the consumer parks it)', async () => {
    assert.deepEqual(await pay(order([['NOPE', 1]]).orderId), { kind: 'no_reservation' });
  });
});
