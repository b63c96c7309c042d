import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadStackConfig } from '@checkout/testing';
import { expire, inTx, order, uniqueSku } from './support';
import { inventorySpec } from './inventory-spec';

const base = `http://127.0.0.1:${loadStackConfig().servicePorts.inventory}`;
const ACME = { authorization: 'Bearer acme-dev-key' };
const GLOBEX = { authorization: 'Bearer globex-dev-key' };

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('inventory HTTP API (running service)', () => {
  const spec = inventorySpec(5);

  it('PUT sets the available units; GET shows { sku, available, reserved, sold }', async () => {
    const sku = uniqueSku('api');
    const put = await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 500, allowBackorder: false });
    assert.deepEqual(put, {
      status: 200,
      body: { sku, available: 500, reserved: 0, sold: 0, allowBackorder: false, reservationTtlSeconds: null },
    });

    const get = await call('GET', `/v1/stock/${sku}`, ACME);
    assert.deepEqual(get, {
      status: 200,
      body: { sku, available: 500, reserved: 0, sold: 0, reservationTtlSeconds: null },
    });
  });

  it('each PUT is recorded as a restock delta, so initial + restocks = available + reserved + sold', async () => {
    const sku = uniqueSku('restock');
    await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 10 });
    await inTx(spec.ds, (tx) =>
      spec.reserve.execute(tx, {
        tenantId: 'acme',
        order: order([[sku, 4]]),
      }),
    );
    const put = await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 20, allowBackorder: true });
    assert.deepEqual(put.body, {
      sku,
      available: 20,
      reserved: 4,
      sold: 0,
      allowBackorder: true,
      reservationTtlSeconds: null,
    });

    const deltas = await spec.ds.query(
      `SELECT delta, available_after AS "availableAfter" FROM stock_restock WHERE tenant_id = 'acme' AND sku = $1 ORDER BY id`,
      [sku],
    );
    assert.deepEqual(deltas, [
      { delta: 10, availableAfter: 10 },
      { delta: 14, availableAfter: 20 },
    ]);
    const [row] = await spec.ds.query(
      `SELECT restocked::int AS restocked, available, reserved, sold FROM stock WHERE tenant_id = 'acme' AND sku = $1`,
      [sku],
    );
    assert.equal(row.restocked, 24);
    assert.equal(row.restocked, row.available + row.reserved + row.sold);
    const kept = await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 20 });
    assert.equal(kept.body.allowBackorder, true, 'an omitted allowBackorder keeps the current flag');
  });

  it("another tenant's SKU and an unknown SKU answer 404", async () => {
    const sku = uniqueSku('mine');
    await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 1 });

    assert.deepEqual((await call('GET', `/v1/stock/${sku}`, GLOBEX)).status, 404);
    const unknown = await call('GET', `/v1/stock/${uniqueSku('never')}`, ACME);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'UNKNOWN_SKU');
  });

  it('bad input gets 400 and changes nothing; no key gets 401', async () => {
    const sku = uniqueSku('bad');
    await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 7 });
    for (const body of [
      { available: -1 },
      { available: 1e12 },
      { available: 1.5 },
      { available: '5' },
      { available: 5, allowBackorder: 'yes' },
      { available: 5, reserved: 3 },
      { available: 5, reservationTtlSeconds: 0 },
      { available: 5, reservationTtlSeconds: 86_401 },
      { available: 5, reservationTtlSeconds: 1.5 },
      { available: 5, reservationTtlSeconds: '60' },
      {},
    ]) {
      const res = await call('PUT', `/v1/admin/stock/${sku}`, ACME, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'VALIDATION_FAILED');
    }
    assert.equal((await call('PUT', `/v1/admin/stock/${sku}`, ACME, '{"available":')).status, 400);
    assert.equal((await call('PUT', `/v1/admin/stock/bad%20sku`, ACME, { available: 1 })).status, 400);
    assert.equal((await call('GET', `/v1/stock/${sku}`, {})).status, 401);
    assert.deepEqual((await call('GET', `/v1/stock/${sku}`, ACME)).body, {
      sku,
      available: 7,
      reserved: 0,
      sold: 0,
      reservationTtlSeconds: null,
    });
  });

  it('lazy expiry: a hold past its TTL reads as available even before the job releases it', async () => {
    const sku = uniqueSku('lazyread');
    await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 3 });
    const o = order([[sku, 2]]);
    await inTx(spec.ds, (tx) => spec.reserve.execute(tx, { tenantId: 'acme', order: o }));
    assert.deepEqual((await call('GET', `/v1/stock/${sku}`, ACME)).body, {
      sku,
      available: 1,
      reserved: 2,
      sold: 0,
      reservationTtlSeconds: null,
    });

    await expire(spec.ds, o.orderId);

    assert.deepEqual((await call('GET', `/v1/stock/${sku}`, ACME)).body, {
      sku,
      available: 3,
      reserved: 0,
      sold: 0,
      reservationTtlSeconds: null,
    });
  });

  it('reservationTtlSeconds: set, shown by GET, kept when omitted, back to the default with null', async () => {
    const sku = uniqueSku('ttl');
    const put = await call('PUT', `/v1/admin/stock/${sku}`, ACME, {
      available: 5,
      reservationTtlSeconds: 90,
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.reservationTtlSeconds, 90);
    assert.equal((await call('GET', `/v1/stock/${sku}`, ACME)).body.reservationTtlSeconds, 90);

    const kept = await call('PUT', `/v1/admin/stock/${sku}`, ACME, { available: 6 });
    assert.equal(
      kept.body.reservationTtlSeconds,
      90,
      'an omitted reservationTtlSeconds keeps the current one',
    );
    for (const ttl of [1, 86_400]) {
      const edge = await call('PUT', `/v1/admin/stock/${sku}`, ACME, {
        available: 6,
        reservationTtlSeconds: ttl,
      });
      assert.equal(edge.body.reservationTtlSeconds, ttl);
    }

    const cleared = await call('PUT', `/v1/admin/stock/${sku}`, ACME, {
      available: 6,
      reservationTtlSeconds: null,
    });
    assert.equal(cleared.body.reservationTtlSeconds, null);
    assert.equal((await call('GET', `/v1/stock/${sku}`, ACME)).body.reservationTtlSeconds, null);
  });
});
