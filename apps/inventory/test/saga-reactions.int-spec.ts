import { afterAll, afterEach, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { InboxTransport, OutboxWriter, consoleLogger } from '@checkout/messaging';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { goldenEvent, goldenFixture, sagaHarness } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import {
  CancelOrderStockHandler,
  CommitStockHandler,
  ReleaseStockHandler,
  ReserveStockHandler,
  ReturnSoldStockHandler,
  SetStockHandler,
} from '../src/reservation/commands';
import { ReservationConsumer } from '../src/reservation/consumers/reservation.consumer';
import { reservationsOf, stockOf } from './support';

const { tenantId, payload: order } = goldenFixture('order.created');
const sku = order.lines[0].sku;
const outbox = new OutboxWriter('inventory');

/** The stock of the golden order's SKU. */
const givenStock =
  (available: number, allowBackorder = false) =>
  (ds: DataSource) =>
    ds.transaction((tx) =>
      new SetStockHandler(outbox).execute(tx, { tenantId, sku, available, allowBackorder }),
    );

/** The reservation ran out (the expiry job released it) and another order bought the unit it gave back. */
const expiredAndSoldElsewhere = (ds: DataSource) =>
  ds.query(
    `WITH r AS (UPDATE reservation SET status = 'released', release_reason = 'expired'
                 WHERE tenant_id = $1 AND order_id = $2 RETURNING sku, qty)
     UPDATE stock s SET reserved = s.reserved - r.qty, sold = s.sold + r.qty FROM r
      WHERE s.tenant_id = $1 AND s.sku = r.sku`,
    [tenantId, order.orderId],
  );

describe('inventory saga reactions: given events, expect the golden events (ReservationConsumer on its inbox)', () => {
  const saga = sagaHarness({
    service: 'inventory',
    migrations: MIGRATIONS,
    runtime: (dataSource) =>
      new InboxTransport({
        name: 'inventory',
        brokers: ['127.0.0.1:1'],
        dataSource,
        logger: consoleLogger,
        admission: {
          tenants: new TenantRegistry([{ id: tenantId, apiKeySha256: hashApiKey('saga-key') }]),
          codePrefix: 'INVENTORY',
        },
      }).addConsumer(
        new ReservationConsumer(
          new ReserveStockHandler(outbox, { INVENTORY_RESERVATION_TTL_SECONDS: 600 }),
          new ReleaseStockHandler(outbox),
          new CommitStockHandler(outbox),
          new ReturnSoldStockHandler(),
          new CancelOrderStockHandler(new ReleaseStockHandler(outbox), new ReturnSoldStockHandler()),
        ),
      ),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(() => saga.cleanUp());
  afterAll(() => saga.stop());

  it('given order.created and the stock, expect inventory.reserved (the units held)', async () => {
    const { dataSource } = await saga
      .given(givenStock(5))
      .givenEvents('order.created')
      .expectEvents('inventory.reserved');
    assert.deepEqual(await stockOf(dataSource, sku, tenantId), {
      available: 4,
      reserved: 1,
      sold: 0,
      restocked: 5,
    });
  });

  it('given order.created and too little stock, expect inventory.rejected (nothing held)', async () => {
    const { dataSource } = await saga
      .given(givenStock(0))
      .givenEvents('order.created')
      .expectEvents('inventory.rejected');
    assert.deepEqual(await reservationsOf(dataSource, order.orderId), []);
  });

  it('given payment.failed after the reservation, expect inventory.released (payment_failed)', async () => {
    const { dataSource } = await saga
      .given(givenStock(5))
      .givenEvents('order.created', 'payment.failed')
      .expectEvents('inventory.reserved', 'inventory.released');
    assert.deepEqual(await stockOf(dataSource, sku, tenantId), {
      available: 5,
      reserved: 0,
      sold: 0,
      restocked: 5,
    });
  });

  it('given order.cancelled after the reservation, expect inventory.released (order_cancelled)', async () => {
    await saga
      .given(givenStock(5))
      .givenEvents('order.created', 'order.cancelled')
      .expectEvents('inventory.reserved', goldenEvent('inventory.released', { reason: 'order_cancelled' }));
  });

  it('given order.cancelled before order.created (topics crossed), expect nothing reserved and nothing released', async () => {
    const { dataSource } = await saga
      .given(givenStock(5))
      .givenEvents('order.cancelled', 'order.created')
      .expectEvents();
    assert.deepEqual(await stockOf(dataSource, sku, tenantId), {
      available: 5,
      reserved: 0,
      sold: 0,
      restocked: 5,
    });
  });

  it('given payment.succeeded for a held reservation, expect inventory.committed', async () => {
    const { dataSource } = await saga
      .given(givenStock(5))
      .givenEvents('order.created', 'payment.succeeded')
      .expectEvents('inventory.reserved', 'inventory.committed');
    assert.deepEqual(await stockOf(dataSource, sku, tenantId), {
      available: 4,
      reserved: 0,
      sold: 1,
      restocked: 5,
    });
  });

  it('given payment.succeeded after the reservation expired and the stock went, expect inventory.backordered (SKU allows it)', async () => {
    await saga
      .given(givenStock(1, true))
      .givenEvents('order.created')
      .given(expiredAndSoldElsewhere)
      .givenEvents('payment.succeeded')
      .expectEvents('inventory.reserved', 'inventory.backordered');
  });

  it('given payment.succeeded after the reservation expired and the stock went, expect inventory.unavailable-after-payment (no backorder)', async () => {
    await saga
      .given(givenStock(1))
      .givenEvents('order.created')
      .given(expiredAndSoldElsewhere)
      .givenEvents('payment.succeeded')
      .expectEvents('inventory.reserved', 'inventory.unavailable-after-payment');
  });

  it('given fulfillment.shipment-failed after the sale, expect no event and the sold unit back to available', async () => {
    const { dataSource } = await saga
      .given(givenStock(5))
      .givenEvents('order.created', 'payment.succeeded', 'fulfillment.shipment-failed')
      .expectEvents('inventory.reserved', 'inventory.committed');
    assert.deepEqual(await stockOf(dataSource, sku, tenantId), {
      available: 5,
      reserved: 0,
      sold: 0,
      restocked: 5,
    });
  });
});
