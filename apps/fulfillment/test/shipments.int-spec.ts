import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { TopicReader, rawSagaEvent } from '@checkout/testing';
import {
  GLOBEX_KEY,
  Publishers,
  consumed,
  fulfillmentDb,
  fulfillmentEventsOf,
  getJson,
  orderPaid,
  refundOf,
  shipmentWhere,
  shipmentsOf,
  unique,
} from './support';

const TOPICS = [
  'fulfillment.shipment-created',
  'fulfillment.shipment-failed',
  'fulfillment.shipment-cancelled',
  'order.paid.dlq',
];

describe('fulfillment shipments, through the outboxes, Debezium and Kafka', () => {
  let publishers: Publishers;
  let fulfillment: DataSource;
  let topics: TopicReader;
  const byOrder = (topic: string, orderId: string) => (m: { topic: string; key: string | null }) =>
    m.topic === topic && m.key === orderId;

  beforeAll(async () => {
    [publishers, fulfillment, topics] = await Promise.all([
      Publishers.open(),
      fulfillmentDb(),
      new TopicReader(TOPICS).start(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([publishers.close(), fulfillment.destroy(), topics.stop()]);
  });

  it('given order.paid, books one shipment and publishes shipment-created with carrier and tracking number', async () => {
    const paid = orderPaid();

    await publishers.publish('order', 'order.paid', paid);

    const [message] = await topics.waitFor(byOrder('fulfillment.shipment-created', paid.orderId));
    const event = message.json<{ payload: Record<string, string>; tenantId: string; causationId: string }>();
    assert.equal(event.tenantId, 'acme');
    assert.equal(event.payload.carrier, 'sim-post');
    assert.match(event.payload.trackingNumber, /^SIMP[0-9A-F]{16}$/);
    const shipment = await shipmentWhere(paid.orderId, (s) => s.status === 'created');
    assert.equal(shipment.shipmentId, event.payload.shipmentId);
    assert.equal(shipment.trackingNumber, event.payload.trackingNumber);
    assert.equal(shipment.customerId, paid.customerId);
    assert.deepEqual(shipment.lines, [{ sku: paid.lines[0].sku, quantity: 2 }]);
  });

  it('given order.paid twice for the same order, there is one shipment and one shipment-created', async () => {
    const paid = orderPaid();

    const first = await publishers.publish('order', 'order.paid', paid);
    const second = await publishers.publish('order', 'order.paid', paid);
    await consumed(fulfillment, first, second);

    assert.equal((await shipmentsOf(paid.orderId)).length, 1);
    assert.deepEqual(await fulfillmentEventsOf(fulfillment, paid.orderId), ['fulfillment.shipment-created']);
    await topics.waitFor(byOrder('fulfillment.shipment-created', paid.orderId));
    assert.equal(topics.matching(byOrder('fulfillment.shipment-created', paid.orderId)).length, 1);
  });

  it('given a SKU the carrier refuses, publishes shipment-failed with the lines and the reason', async () => {
    const sku = unique('UNSHIPPABLE');
    const paid = orderPaid({
      lines: [
        { sku: unique('IT-OK'), quantity: 1, unitPrice: 10_000, discount: 0, lineTotal: 10_000 },
        { sku, quantity: 3, unitPrice: 10_000, discount: 0, lineTotal: 30_000 },
      ],
    });

    await publishers.publish('order', 'order.paid', paid);

    const [message] = await topics.waitFor(byOrder('fulfillment.shipment-failed', paid.orderId));
    const { payload } = message.json<{ payload: { lines: unknown[]; reason: string } }>();
    assert.deepEqual(
      payload.lines,
      paid.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
    );
    assert.equal(payload.reason, `carrier_refused_sku: ${sku}`);
    const shipment = await shipmentWhere(paid.orderId, (s) => s.status === 'failed');
    assert.equal(shipment.trackingNumber, null);
    assert.equal(shipment.failureReason, payload.reason);
    assert.deepEqual(await fulfillmentEventsOf(fulfillment, paid.orderId), ['fulfillment.shipment-failed']);
  });

  it('given a customer address the carrier cannot reach, publishes shipment-failed', async () => {
    const paid = orderPaid({ customerId: unique('undeliverable') });

    await publishers.publish('order', 'order.paid', paid);

    const [message] = await topics.waitFor(byOrder('fulfillment.shipment-failed', paid.orderId));
    assert.equal(
      message.json<{ payload: { reason: string } }>().payload.reason,
      'carrier_undeliverable_address',
    );
  });

  it('given payment.refunded after the shipment was created, cancels it and publishes shipment-cancelled once', async () => {
    const paid = orderPaid();
    await publishers.publish('order', 'order.paid', paid);
    const created = await shipmentWhere(paid.orderId, (s) => s.status === 'created');
    const refund = refundOf(paid, 'customer_request');

    const first = await publishers.publish('payment', 'payment.refunded', refund);
    const again = await publishers.publish('payment', 'payment.refunded', refund);

    const [message] = await topics.waitFor(byOrder('fulfillment.shipment-cancelled', paid.orderId));
    const { payload } = message.json<{ payload: Record<string, unknown> }>();
    assert.deepEqual(payload, {
      orderId: paid.orderId,
      shipmentId: created.shipmentId,
      carrier: 'sim-post',
      trackingNumber: created.trackingNumber,
      lines: created.lines,
      reason: 'order_refunded: customer_request',
    });
    const cancelled = await shipmentWhere(paid.orderId, (s) => s.status === 'cancelled');
    assert.equal(cancelled.cancelReason, 'order_refunded: customer_request');
    await consumed(fulfillment, first, again);
    assert.deepEqual(await fulfillmentEventsOf(fulfillment, paid.orderId), [
      'fulfillment.shipment-created',
      'fulfillment.shipment-cancelled',
    ]);
  });

  it('given payment.refunded before order.paid, never books a shipment; a failed shipment is not cancelled', async () => {
    const paid = orderPaid();
    const refund = refundOf(paid, 'order_cancelled');
    const refunded = await publishers.publish('payment', 'payment.refunded', refund);
    await consumed(fulfillment, refunded);

    const late = await publishers.publish('order', 'order.paid', paid);
    await consumed(fulfillment, late);

    assert.deepEqual(await shipmentsOf(paid.orderId), []);
    assert.deepEqual(await fulfillmentEventsOf(fulfillment, paid.orderId), []);

    const failing = orderPaid({ customerId: unique('undeliverable') });
    await publishers.publish('order', 'order.paid', failing);
    await shipmentWhere(failing.orderId, (s) => s.status === 'failed');
    const afterFailure = await publishers.publish('payment', 'payment.refunded', {
      ...refund,
      orderId: failing.orderId,
      reason: 'shipment_failed',
    });
    await consumed(fulfillment, afterFailure);
    assert.equal((await shipmentsOf(failing.orderId))[0].status, 'failed');
    assert.deepEqual(await fulfillmentEventsOf(fulfillment, failing.orderId), [
      'fulfillment.shipment-failed',
    ]);
  });

  it('parks an invalid order.paid and one of an unknown tenant on the DLQ, changing nothing', async () => {
    const invalid = orderPaid();
    await publishers.publishRaw(
      'order',
      rawSagaEvent('order.paid', 'acme', invalid.orderId, { ...invalid, total: -1 }),
    );
    const foreign = orderPaid({ tenantId: 'nobody' });
    await publishers.publish('order', 'order.paid', foreign, { tenantId: 'nobody' });

    const fromFulfillment =
      (orderId: string) => (m: { topic: string; key: string | null; headers: Record<string, string> }) =>
        byOrder('order.paid.dlq', orderId)(m) && m.headers['dlq-consumer'] === 'fulfillment';
    const [parkedInvalid] = await topics.waitFor(fromFulfillment(invalid.orderId));
    assert.equal(parkedInvalid.headers['dlq-code'], 'CONTRACT.INVALID_PAYLOAD');
    assert.match(parkedInvalid.headers['dlq-reason'], /payload\.total/);
    const [parkedForeign] = await topics.waitFor(fromFulfillment(foreign.orderId));
    assert.equal(parkedForeign.headers['dlq-code'], 'FULFILLMENT.UNKNOWN_TENANT');

    for (const orderId of [invalid.orderId, foreign.orderId]) {
      const [{ n }] = await fulfillment.query(
        `SELECT (SELECT count(*) FROM shipment WHERE order_id = $1) + (SELECT count(*) FROM notification WHERE order_id = $1)
              + (SELECT count(*) FROM outbox WHERE saga_id = $1) AS n`,
        [orderId],
      );
      assert.equal(Number(n), 0);
    }
  });

  it('another tenant sees an empty list; a bad or missing orderId is 400; no key is 401', async () => {
    const paid = orderPaid();
    await publishers.publish('order', 'order.paid', paid);
    await shipmentWhere(paid.orderId, (s) => s.status === 'created');

    assert.deepEqual(await getJson(`/v1/shipments?orderId=${paid.orderId}`, GLOBEX_KEY), {
      status: 200,
      body: { orderId: paid.orderId, shipments: [] },
    });
    assert.equal((await getJson('/v1/shipments?orderId=not-a-uuid')).body.error, 'VALIDATION_FAILED');
    assert.equal((await getJson('/v1/shipments')).status, 400);
    assert.equal((await getJson(`/v1/shipments?orderId=${paid.orderId}`, null)).status, 401);
  });
});
