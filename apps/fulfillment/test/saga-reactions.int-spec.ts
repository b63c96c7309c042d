import { afterAll, afterEach, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { InboxTransport, OutboxWriter, consoleLogger } from '@checkout/messaging';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { goldenFixture, sagaHarness } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { RecordNotificationHandler } from '../src/notifications/commands';
import { NotificationsConsumer } from '../src/notifications/consumers/notifications.consumer';
import { CancelShipmentHandler, CreateShipmentHandler } from '../src/shipping/commands';
import { ShippingConsumer } from '../src/shipping/consumers/shipping.consumer';
import { ShippingMetrics } from '../src/shipping/shipping.metrics';

const { tenantId, payload: paid } = goldenFixture('order.paid');
const voucher = goldenFixture('fulfillment.apology-voucher-issued').payload;
/** The tracking number is derived from the generated shipment id. */
const SHIPMENT = { ignoring: ['trackingNumber'] };

/** Fulfillment's two consumer classes on one transport, as the service registers them. */
function fulfillmentRuntime(dataSource: DataSource, failSkus: string[] = []) {
  const outbox = new OutboxWriter('fulfillment');
  const metrics = new ShippingMetrics(new Registry(), dataSource);
  const notify = new RecordNotificationHandler(
    { APOLOGY_VOUCHER_PERCENT_OFF: voucher.percentOff },
    outbox,
    () => voucher.code,
  );
  return new InboxTransport({
    name: 'fulfillment',
    brokers: ['127.0.0.1:1'],
    dataSource,
    logger: consoleLogger,
    admission: {
      tenants: new TenantRegistry([{ id: tenantId, apiKeySha256: hashApiKey('saga-key') }]),
      codePrefix: 'FULFILLMENT',
    },
    sagaLocks: true, // as the service runs it
  })
    .addConsumer(
      new ShippingConsumer(
        new CreateShipmentHandler(
          outbox,
          { CARRIER_NAME: 'sim-post', CARRIER_FAIL_SKUS: failSkus, CARRIER_FAIL_CUSTOMERS: [] },
          metrics,
        ),
        new CancelShipmentHandler(outbox, metrics),
        notify,
      ),
    )
    .addConsumer(new NotificationsConsumer(notify));
}

const notificationsOf = async (ds: DataSource) =>
  (
    (await ds.query(
      `SELECT kind, customer_id AS "customerId" FROM notification WHERE order_id = $1 ORDER BY kind`,
      [paid.orderId],
    )) as { kind: string; customerId: string | null }[]
  ).map((n) => [n.kind, n.customerId]);

describe('fulfillment saga reactions: given events, expect the golden events (its consumers on their inbox)', () => {
  const saga = sagaHarness({
    service: 'fulfillment',
    migrations: MIGRATIONS,
    runtime: (ds) => fulfillmentRuntime(ds),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(() => saga.cleanUp());
  afterAll(() => saga.stop());

  it('given order.paid, expect fulfillment.shipment-created and the order confirmation queued', async () => {
    const { dataSource } = await saga
      .givenEvents('order.paid')
      .expectEvents('fulfillment.shipment-created', SHIPMENT);
    assert.deepEqual(await notificationsOf(dataSource), [['order_confirmation', paid.customerId]]);
  });

  it('given payment.refunded after the shipment was booked, expect fulfillment.shipment-cancelled', async () => {
    await saga
      .givenEvents('order.paid', 'payment.refunded')
      .expectEvents('fulfillment.shipment-created', 'fulfillment.shipment-cancelled', SHIPMENT);
  });

  it('given payment.refunded before order.paid (topics crossed), expect no shipment at all', async () => {
    await saga.givenEvents('payment.refunded', 'order.paid').expectEvents();
  });

  it('given order.created, expect no event, the customer remembered for later emails', async () => {
    const { dataSource } = await saga.givenEvents('order.created').expectEvents();
    const rows: { customer_id: string }[] = await dataSource.query(
      `SELECT customer_id FROM fulfillment_order WHERE order_id = $1`,
      [paid.orderId],
    );
    assert.deepEqual(rows, [{ customer_id: 'c1' }]);
  });

  it('given payment.failed, expect no event and the payment-failed email queued for the remembered customer', async () => {
    const { dataSource } = await saga.givenEvents('order.created', 'payment.failed').expectEvents();
    assert.deepEqual(await notificationsOf(dataSource), [['payment_failed', 'c1']]);
  });

  it('given inventory.unavailable-after-payment, expect fulfillment.apology-voucher-issued and the apology queued', async () => {
    const { dataSource } = await saga
      .givenEvents('order.created', 'inventory.unavailable-after-payment')
      .expectEvents('fulfillment.apology-voucher-issued');
    assert.deepEqual(await notificationsOf(dataSource), [['out_of_stock_apology', 'c1']]);
  });
});

describe('fulfillment saga reactions with a carrier that refuses the SKU', () => {
  const saga = sagaHarness({
    service: 'fulfillment',
    migrations: MIGRATIONS,
    runtime: (ds) => fulfillmentRuntime(ds, [paid.lines[0].sku]),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(() => saga.cleanUp());
  afterAll(() => saga.stop());

  it('given order.paid, expect fulfillment.shipment-failed (inventory returns the units, payment refunds)', async () => {
    await saga.givenEvents('order.paid').expectEvents('fulfillment.shipment-failed');
  });
});
