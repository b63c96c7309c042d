import { afterAll, afterEach, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { goldenFixture, sagaHarness } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { OrderRepository } from '../src/orders/database/order.repository';
import { orderTransport } from './order-runtime';

const { tenantId, payload: created } = goldenFixture('order.created');
const voucher = goldenFixture('fulfillment.apology-voucher-issued').payload;
const HOLD = 'gate-hold-1';
const orders = new OrderRepository();

/** The order as checkout placed it (what order.created tells the others), its gate units held. */
const placed = (ds: DataSource) =>
  ds.transaction((tx) =>
    orders.insert(tx, {
      id: created.orderId,
      tenantId,
      customerId: created.customerId,
      currency: created.currency,
      lines: created.lines,
      subtotal: created.subtotal,
      discount: created.discount,
      total: created.total,
      voucherCode: created.voucherCode,
      paymentToken: created.paymentToken,
      gateHoldId: HOLD,
      idempotencyKey: 'saga-reactions-1',
    }),
  );

const statusOf = async (ds: DataSource) => (await orders.find(ds, tenantId, created.orderId))!;

describe('order saga reactions: given events, expect the golden events (SagaEventsConsumer on its inbox)', () => {
  /** The stock gate's calls (Redis in the service), made after commit. */
  const gateCalls: string[] = [];
  const saga = sagaHarness({
    service: 'order',
    migrations: MIGRATIONS,
    runtime: (dataSource) => orderTransport(dataSource, { name: 'order', tenantId, gateCalls }),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(async () => {
    gateCalls.length = 0;
    await saga.cleanUp();
  });
  afterAll(() => saga.stop());

  it('given inventory.reserved, expect no event and the order awaiting payment', async () => {
    const { dataSource } = await saga.given(placed).givenEvents('inventory.reserved').expectEvents();
    assert.equal((await statusOf(dataSource)).status, 'AWAITING_PAYMENT');
  });

  it('given inventory.rejected, expect no event, the order rejected and its gate units given back', async () => {
    const { dataSource } = await saga.given(placed).givenEvents('inventory.rejected').expectEvents();
    assert.equal((await statusOf(dataSource)).status, 'REJECTED');
    assert.deepEqual(gateCalls, [`giveBack:${HOLD}:inventory.rejected`]);
  });

  it('given inventory.released, expect no event and the gate units given back with the reason', async () => {
    await saga.given(placed).givenEvents('inventory.reserved', 'inventory.released').expectEvents();
    assert.deepEqual(gateCalls, [`giveBack:${HOLD}:inventory.released:payment_failed`]);
  });

  it('given payment.succeeded alone, expect no event: money without committed stock is not paid yet', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'payment.succeeded')
      .expectEvents();
    const order = await statusOf(dataSource);
    assert.deepEqual([order.status, order.paymentState], ['AWAITING_PAYMENT', 'succeeded']);
  });

  it('given payment.succeeded and inventory.committed, expect order.paid with the snapshot and the payment', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'payment.succeeded', 'inventory.committed')
      .expectEvents('order.paid');
    assert.equal((await statusOf(dataSource)).status, 'PAID');
    assert.deepEqual(gateCalls, [`settle:${HOLD}`]);
  });

  it('given inventory.committed before payment.succeeded (topics crossed), expect the same order.paid', async () => {
    await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'inventory.committed', 'payment.succeeded')
      .expectEvents('order.paid');
  });

  it('given inventory.backordered, expect no event and the order backordered', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'payment.succeeded', 'inventory.backordered')
      .expectEvents();
    assert.equal((await statusOf(dataSource)).status, 'BACKORDERED');
  });

  it('given payment.failed, expect order.cancelled (payment_failed, nothing to refund)', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'payment.failed')
      .expectEvents('order.cancelled');
    assert.equal((await statusOf(dataSource)).status, 'CANCELLED');
  });

  it('given payment.refunded, expect no event and the payment recorded as refunded', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('inventory.reserved', 'payment.succeeded', 'payment.refunded')
      .expectEvents();
    assert.equal((await statusOf(dataSource)).paymentState, 'refunded');
  });

  it('given fulfillment.shipment-created after order.paid, expect no further event and the order shipped', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents(
        'inventory.reserved',
        'payment.succeeded',
        'inventory.committed',
        'fulfillment.shipment-created',
      )
      .expectEvents('order.paid');
    assert.equal((await statusOf(dataSource)).status, 'SHIPPED');
  });

  it('given fulfillment.apology-voucher-issued, expect no event and the code redeemable once by the customer', async () => {
    const { dataSource } = await saga
      .given(placed)
      .givenEvents('fulfillment.apology-voucher-issued')
      .expectEvents();
    const rows: unknown[] = await dataSource.query(
      `SELECT percent_off, max_redemptions, source, customer_id FROM vouchers WHERE tenant_id = $1 AND code = $2`,
      [tenantId, voucher.code],
    );
    assert.deepEqual(rows, [
      {
        percent_off: voucher.percentOff,
        max_redemptions: 1,
        source: 'apology',
        customer_id: voucher.customerId,
      },
    ]);
  });
});
