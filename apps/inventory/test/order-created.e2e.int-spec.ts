import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { OrderCreatedV1 } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import {
  SeenMessage,
  TopicReader,
  loadStackConfig,
  rawSagaEvent,
  serviceDataSource,
  waitFor,
} from '@checkout/testing';
import { order, reservationsOf, stockOf, uniqueSku } from './support';

const base = `http://127.0.0.1:${loadStackConfig().servicePorts.inventory}`;
const putStock = (sku: string, available: number) =>
  fetch(`${base}/v1/admin/stock/${sku}`, {
    method: 'PUT',
    headers: { authorization: 'Bearer acme-dev-key', 'content-type': 'application/json' },
    body: JSON.stringify({ available }),
  });

describe('order.created through the order outbox, Debezium and Kafka to the inventory service', () => {
  const orderOutbox = new OutboxWriter('order');
  let orderDb: DataSource;
  let inventoryDb: DataSource;
  let results: TopicReader;
  let dlq: TopicReader;

  /** Publishes an order.created the way the order service does: in a transaction on its own outbox. */
  const publish = (payload: OrderCreatedV1, tenantId = 'acme') =>
    orderDb.transaction((tx) =>
      orderOutbox.append(tx, { type: 'order.created', tenantId, sagaId: payload.orderId, payload }),
    );

  /** Publishes a raw envelope the writer would refuse (a buggy producer), straight into the order outbox. */
  const publishRaw = async (orderId: string, payload: unknown, tenantId = 'acme') => {
    const envelope = rawSagaEvent('order.created', tenantId, orderId, payload);
    await orderDb.query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id, sequence, payload)
       VALUES ($1, 'order', $2::text, 'order.created', 1, $3, $2::uuid, $2::text, 1, $4)`,
      [envelope.eventId, orderId, tenantId, JSON.stringify(envelope)],
    );
  };

  const payloadOf = (m: SeenMessage) => m.json<{ payload: Record<string, unknown> }>().payload;

  beforeAll(async () => {
    orderDb = await serviceDataSource('order_svc', 2);
    inventoryDb = await serviceDataSource('inventory_svc', 2);
    results = await new TopicReader(['inventory.reserved', 'inventory.rejected']).start();
    dlq = await new TopicReader(['order.created.dlq']).start();
  });
  afterAll(async () => {
    await results.stop();
    await dlq.stop();
    await orderDb.destroy();
    await inventoryDb.destroy();
  });

  it('given stock for one unit: the first order is reserved, the second rejected, an unknown SKU rejected', async () => {
    const sku = uniqueSku('e2e');
    assert.equal((await putStock(sku, 1)).status, 200);
    const first = order([[sku, 1]]);
    const second = order([[sku, 1]]);
    const unknown = order([[uniqueSku('e2e-none'), 1]]);

    await publish(first);
    const [reserved] = await results.waitFor((m) => m.key === first.orderId);
    await publish(second);
    await publish(unknown);
    const [rejected] = await results.waitFor((m) => m.key === second.orderId);
    const [rejectedUnknown] = await results.waitFor((m) => m.key === unknown.orderId);

    assert.equal(reserved.topic, 'inventory.reserved');
    assert.deepEqual(payloadOf(reserved).lines, [{ sku, quantity: 1 }]);
    assert.equal(payloadOf(reserved).amount, first.total);
    assert.equal(reserved.headers.tenantId, 'acme');
    assert.equal(rejected.topic, 'inventory.rejected');
    assert.deepEqual(
      [payloadOf(rejected).shortSkus, payloadOf(rejected).reason],
      [[sku], 'insufficient_stock'],
    );
    assert.equal(payloadOf(rejectedUnknown).reason, 'unknown_sku');
    // The payment service may already have charged the reserved order (reserved -> sold): one unit is taken.
    const stock = (await stockOf(inventoryDb, sku, 'acme'))!;
    assert.deepEqual([stock.available, stock.reserved + stock.sold, stock.restocked], [0, 1, 1]);
  });

  it('invalid events (negative quantity, missing fields, unknown tenant) land on the DLQ and change nothing', async () => {
    const sku = uniqueSku('e2e-bad');
    assert.equal((await putStock(sku, 5)).status, 200);
    const negative = order([[sku, 1]]);
    negative.lines[0].quantity = -2;
    const missing = order([[sku, 1]]) as Partial<OrderCreatedV1>;
    delete missing.customerId;
    delete missing.paymentToken;
    const foreign = order([[sku, 1]]);

    await publishRaw(negative.orderId, negative);
    await publishRaw(missing.orderId!, missing);
    await publish(foreign, 'nobody-tenant');

    const parked = await dlq.waitFor(
      (m) =>
        m.headers['dlq-consumer'] === 'inventory' &&
        [negative.orderId, missing.orderId, foreign.orderId].includes(m.key!),
      { count: 3 },
    );
    const codes = Object.fromEntries(parked.map((m) => [m.key, m.headers['dlq-code']]));
    assert.deepEqual(codes, {
      [negative.orderId]: 'CONTRACT.INVALID_PAYLOAD',
      [missing.orderId!]: 'CONTRACT.INVALID_PAYLOAD',
      [foreign.orderId]: 'INVENTORY.UNKNOWN_TENANT',
    });
    assert.match(parked.find((m) => m.key === negative.orderId)!.headers['dlq-reason'], /quantity/);
    assert.match(parked.find((m) => m.key === missing.orderId)!.headers['dlq-reason'], /customerId/);

    assert.deepEqual(await stockOf(inventoryDb, sku, 'acme'), {
      available: 5,
      reserved: 0,
      sold: 0,
      restocked: 5,
    });
    for (const orderId of [negative.orderId, missing.orderId!, foreign.orderId]) {
      assert.deepEqual(await reservationsOf(inventoryDb, orderId), []);
      const [{ n }] = await inventoryDb.query(`SELECT count(*)::int AS n FROM outbox WHERE saga_id = $1`, [
        orderId,
      ]);
      assert.equal(n, 0, 'no event published for a parked message');
    }
    assert.deepEqual(
      results.matching((m) => m.key === foreign.orderId),
      [],
    );
  });

  it('payment.failed for the reserved order releases it (the consumer path of the compensation)', async () => {
    const sku = uniqueSku('e2e-rel');
    assert.equal((await putStock(sku, 2)).status, 200);
    // tok_decline: a running payment service declines it too, so no charge can commit it first.
    const o = order([[sku, 2]], { paymentToken: 'tok_decline' });
    await publish(o);
    await results.waitFor((m) => m.key === o.orderId);
    const paymentDb = await serviceDataSource('payment_svc', 1);
    try {
      await paymentDb.transaction((tx) =>
        new OutboxWriter('payment').append(tx, {
          type: 'payment.failed',
          tenantId: 'acme',
          sagaId: o.orderId,
          payload: {
            orderId: o.orderId,
            paymentId: randomUUID(),
            reason: 'card_declined',
            source: 'response',
          },
        }),
      );
    } finally {
      await paymentDb.destroy();
    }

    await waitFor('stock released', async () => {
      const s = await stockOf(inventoryDb, sku, 'acme');
      return s?.available === 2 && s.reserved === 0 ? s : undefined;
    });
    assert.deepEqual(
      (await reservationsOf(inventoryDb, o.orderId)).map((r) => [r.status, r.releaseReason]),
      [['released', 'payment_failed']],
    );
  });
});
