import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { loadStackConfig } from '@checkout/testing';
import { ReservationMetrics } from '../src/reservation/reservation.metrics';
import { expire, givenStock, inTx, order, uniqueSku } from './support';
import { inventorySpec, testTenants } from './inventory-spec';

describe('inventory_reservation_outcomes_total counts each outcome once its transaction commits', () => {
  const spec = inventorySpec(5);
  const { tenantId, reserve, commit, release, expireJob } = spec;
  let registry: Registry;

  /** The counter's values for the test tenant, as "outcome/reason" -> count. */
  const counts = async () => {
    const metric = await registry.getSingleMetric('inventory_reservation_outcomes_total')!.get();
    return Object.fromEntries(
      metric.values
        .filter((v) => v.labels.tenant === tenantId)
        .map((v) => [`${v.labels.outcome}/${v.labels.reason}`, v.value]),
    );
  };

  beforeAll(async () => {
    registry = new Registry();
    new ReservationMetrics(registry, spec.ds, testTenants);
  });
  afterAll(async () => {});

  it('reserved, rejected, released by reason, committed, backordered, unavailable after payment; a rollback counts nothing', async () => {
    const sku = uniqueSku('outcomes');
    const scarce = uniqueSku('outcomes-bo');
    await givenStock(spec.ds, sku, 3);
    await givenStock(spec.ds, scarce, 1, { allowBackorder: true });
    const run = (o: ReturnType<typeof order>) =>
      inTx(spec.ds, (tx) => reserve.execute(tx, { tenantId, order: o }));
    const [paid, cancelled, lapsed, late] = [
      order([[sku, 1]]),
      order([[sku, 1]]),
      order([[sku, 1]]),
      order([[scarce, 1]]),
    ];
    for (const o of [paid, cancelled, lapsed, late]) await run(o);
    await run(order([[sku, 1]])); // none left
    await run(order([[uniqueSku('outcomes-none'), 1]]));
    await inTx(spec.ds, (tx) => commit.execute(tx, { tenantId, orderId: paid.orderId }));
    await inTx(spec.ds, (tx) =>
      release.execute(tx, { tenantId, orderId: cancelled.orderId, reason: 'order_cancelled' }),
    );
    await expire(spec.ds, lapsed.orderId);
    await expire(spec.ds, late.orderId);
    await inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku, scarce] }));
    await run(order([[scarce, 1]])); // takes the unit the late order lost
    await inTx(spec.ds, (tx) => commit.execute(tx, { tenantId, orderId: late.orderId })); // backordered
    const refused = order([[sku, 1]]);
    await run(refused);
    await expire(spec.ds, refused.orderId);
    await inTx(spec.ds, (tx) => expireJob.execute(tx, { tenantId, skus: [sku] }));
    await run(order([[sku, 2]])); // the last two units: none left for the refused order
    await inTx(spec.ds, (tx) => commit.execute(tx, { tenantId, orderId: refused.orderId })); // no backorder: refund
    await assert.rejects(
      inTx(spec.ds, async (tx) => {
        await reserve.execute(tx, { tenantId, order: order([[scarce, 1]]) });
        throw new Error('rolled back');
      }),
    );

    assert.deepEqual(await counts(), {
      'reserved/none': 7,
      'rejected/insufficient_stock': 1,
      'rejected/unknown_sku': 1,
      'committed/held': 1,
      'released/order_cancelled': 1,
      'released/expired': 3,
      'backordered/none': 1,
      'unavailable_after_payment/none': 1,
    });
  });

  it('the running service shows the counter on /metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${loadStackConfig().internalPorts.inventory}/metrics`);
    assert.match(await res.text(), /# TYPE inventory_reservation_outcomes_total counter/);
  });
});
