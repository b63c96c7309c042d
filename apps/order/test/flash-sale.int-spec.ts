import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { serviceDataSource } from '@checkout/testing';
import { ORDER, call, checkout, checkoutBody, pool, priceSku, stockSku, uniqueSku } from './order-api';

/** Checkouts that found Redis too slow or down and fell back to the database path (by design). */
async function gateFallbacks(): Promise<number> {
  const text = await (await fetch(`${ORDER}/metrics`)).text();
  const m = /^order_stock_gate_unavailable_total\{[^}]*operation="take"[^}]*\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('flash-sale gate at checkout (order service over HTTP, real Redis)', () => {
  let db: DataSource;
  before(async () => {
    db = await serviceDataSource('order_svc', 3);
  });
  after(async () => {
    await db.destroy();
  });

  const ordersFor = async (sku: string) =>
    Number(
      (await db.query(`SELECT count(DISTINCT order_id) AS n FROM order_lines WHERE sku = $1`, [sku]))[0].n,
    );

  it('given 2,000 concurrent checkouts for 500 units, accepts 500 and answers 1,500 OUT_OF_STOCK without the database', async () => {
    const sku = uniqueSku('FLASH');
    await priceSku(sku);
    // Primed from inventory when that service is there (the product path), else from the explicit override.
    const inInventory = await stockSku(sku, 500);
    const on = await call('PUT', `/v1/admin/flash-sales/${sku}`, {
      body: inInventory ? { enabled: true } : { enabled: true, available: 500 },
    });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.available, 500);
    assert.equal(on.json.source, inInventory ? 'inventory' : 'override');

    const keysBefore = Number((await db.query(`SELECT count(*) AS n FROM idempotency_keys`))[0].n);
    const fallbacksBefore = await gateFallbacks();
    const started = Date.now();
    const answers = await pool(Array.from({ length: 2_000 }), 100, () =>
      checkout(checkoutBody(sku), randomUUID()),
    );
    const ms = Date.now() - started;
    const accepted = answers.filter((a) => a.status === 202).length;
    const out = answers.filter((a) => a.status === 409 && a.json.error === 'OUT_OF_STOCK').length;
    console.log(`2,000 gated checkouts in ${ms} ms: ${accepted} accepted, ${out} OUT_OF_STOCK`);
    assert.equal(
      accepted + out,
      2_000,
      [...new Set(answers.filter((a) => a.status !== 202 && a.status !== 409).map((a) => a.text))].join('\n'),
    );
    // Units the saga handed back while the run was still going (a reservation released or expired, an order
    // rejected or cancelled) are sold again: that is the gate doing its job. Without them it is exactly 500.
    const [{ n: returned }] = await db.query(
      `SELECT count(DISTINCT o.id) AS n FROM orders o JOIN order_lines l ON l.order_id = o.id
        WHERE l.sku = $1 AND (o.status IN ('REJECTED', 'CANCELLED')
              OR EXISTS (SELECT 1 FROM inbox i WHERE i.saga_id = o.id AND i.type = 'inventory.released'))`,
      [sku],
    );
    // A checkout whose gate call timed out on a loaded machine takes the database path instead (Redis down
    // -> DB decides): accepted here, and inventory still never reserves more than the stock.
    const fallbacks = (await gateFallbacks()) - fallbacksBefore;
    assert.ok(accepted >= 500, `accepted ${accepted}`);
    assert.ok(
      accepted - 500 <= Number(returned) + fallbacks,
      `accepted ${accepted} with only ${returned} units given back and ${fallbacks} gate fallbacks`,
    );
    assert.equal(await ordersFor(sku), accepted, 'the database saw only the checkouts the gate let through');
    const keysAfter = Number((await db.query(`SELECT count(*) AS n FROM idempotency_keys`))[0].n);
    assert.ok(keysAfter - keysBefore <= accepted + 50, 'refused checkouts wrote no idempotency key'); // other suites may run
  });

  it('gives the unit back when the customer cancels, and passes everything through once the gate is off', async () => {
    const sku = uniqueSku('FLASH1');
    await priceSku(sku);
    await stockSku(sku, 1);
    assert.equal(
      (await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: true, available: 1 } })).status,
      200,
    );
    const first = await checkout(checkoutBody(sku));
    assert.equal(first.status, 202);
    const second = await checkout(checkoutBody(sku));
    assert.equal(second.status, 409);
    assert.deepEqual([second.json.error, second.json.sku, second.json.remaining], ['OUT_OF_STOCK', sku, 0]);
    const cancel = await call('POST', `/v1/orders/${first.json.orderId}/cancel`);
    if (cancel.status === 202) {
      const third = await checkout(checkoutBody(sku));
      assert.equal(third.status, 202, 'the cancelled order gave its unit back to the gate');
    }
    assert.equal(
      (await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: false } })).status,
      200,
    );
    assert.equal((await checkout(checkoutBody(sku))).status, 202, 'gate off: the database path decides');
  });

  it('does not take a second unit for a retry with the same key', async () => {
    const sku = uniqueSku('FLASH2');
    await priceSku(sku);
    await stockSku(sku, 5);
    await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: true, available: 1 } });
    const key = randomUUID();
    const body = checkoutBody(sku);
    assert.equal((await checkout(body, key)).status, 202);
    const retry = await checkout(body, key);
    assert.equal(retry.status, 202);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  });
});
