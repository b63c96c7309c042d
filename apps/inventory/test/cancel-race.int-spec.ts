import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityManager } from 'typeorm';
import { barrier, sagaEvent } from '@checkout/testing';
import { givenStock, order, orderCreatedEvent, stockOf, uniqueSku } from './support';
import { contextOf, inventorySpec } from './inventory-spec';

const ROUNDS = 24;
/** Orders per round: one order.created chunk of this many events against one order.cancelled each. */
const chunkOf = (round: number) => (round % 3 === 0 ? 1 : 4);

describe('inventory: order.created and order.cancelled of one order at the same instant', () => {
  const spec = inventorySpec(8);
  const consumer = spec.consumer;

  it('never keeps stock for a cancelled order: every race ends with the stock where it started', async () => {
    const sku = uniqueSku('race');
    await givenStock(spec.ds, sku, 1_000);
    const orders: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const placed = Array.from({ length: chunkOf(round) }, () => order([[sku, 2]]));
      orders.push(...placed.map((o) => o.orderId));
      // Every transaction has begun before any of them runs its reaction: the two consumers' worst case.
      const go = barrier(placed.length + 1);
      const inTx = (fn: (tx: EntityManager) => Promise<void>) =>
        spec.ds.transaction(async (tx) => {
          await tx.query('SELECT 1');
          await go();
          await fn(tx);
        });
      await Promise.all([
        inTx((tx) =>
          consumer.orderCreated(
            placed.map((o) => orderCreatedEvent(o)),
            contextOf(tx),
          ),
        ),
        ...placed.map((o) =>
          inTx((tx) =>
            consumer.orderCancelled(
              sagaEvent('order.cancelled', spec.tenantId, o.orderId, {
                orderId: o.orderId,
                reason: 'customer_request',
                refundIfCharged: true,
              }),
              contextOf(tx, 'order.cancelled'),
            ),
          ),
        ),
      ]);
    }

    const [{ held }] = await spec.ds.query(
      `SELECT count(*)::int AS held FROM reservation WHERE order_id = ANY($1::uuid[]) AND status = 'held'`,
      [orders],
    );
    assert.equal(held, 0, `${held} of ${orders.length} cancelled orders still hold stock`);
    assert.deepEqual(await stockOf(spec.ds, sku), {
      available: 1_000,
      reserved: 0,
      sold: 0,
      restocked: 1_000,
    });
  });
});
