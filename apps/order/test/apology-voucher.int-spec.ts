import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { OutboxWriter } from '@checkout/messaging';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { call, checkout, checkoutBody, priceSku, stockSku, uniqueSku, suiteDataSource } from './order-api';

const FULFILLMENT = `http://127.0.0.1:${loadStackConfig().servicePorts.fulfillment}`;

/** The apology email of an order as fulfillment's API shows it, once it is there. */
async function apologyOf(orderId: string): Promise<{ voucherCode: string; body: string } | undefined> {
  const res = await fetch(`${FULFILLMENT}/v1/notifications?orderId=${orderId}`, {
    headers: { authorization: 'Bearer acme-dev-key' },
  });
  if (res.status !== 200) return undefined;
  const { notifications } = (await res.json()) as {
    notifications: { kind: string; voucherCode: string | null; body: string }[];
  };
  const n = notifications.find((x) => x.kind === 'out_of_stock_apology' && x.voucherCode);
  return n ? { voucherCode: n.voucherCode!, body: n.body } : undefined;
}

describe('the apology voucher of "paid but out of stock" (fulfillment -> Kafka -> order service)', () => {
  const inventoryDb = suiteDataSource('inventory_svc', 1);

  it('given the apology email, its code is accepted once by a checkout of that customer and refused after', async () => {
    // A real order of a customer (rejected by inventory: the SKU has no stock, so nobody is charged).
    const gone = uniqueSku('APO-GONE');
    await priceSku(gone);
    const customerId = `c-${randomUUID()}`;
    const placed = await checkout(checkoutBody(gone, { customerId }));
    assert.equal(placed.status, 202, placed.text);
    const orderId = placed.json.orderId as string;
    await waitFor(
      'the order to leave PENDING',
      async () => ((await call('GET', `/v1/orders/${orderId}`)).json.status !== 'PENDING' ? true : undefined),
      { timeoutMs: 30_000 },
    );
    // Inventory's verdict for it, published through inventory's outbox as inventory publishes it.
    await inventoryDb.transaction((tx) =>
      new OutboxWriter('inventory').append(tx, {
        type: 'inventory.unavailable-after-payment',
        tenantId: 'acme',
        sagaId: orderId,
        payload: { orderId, lines: [{ sku: gone, quantity: 1 }], shortSkus: [gone] },
      }),
    );
    const email = await waitFor('the apology email', () => apologyOf(orderId), { timeoutMs: 30_000 });
    assert.ok(email.body.includes(email.voucherCode));

    const sku = uniqueSku('APO-BUY');
    await priceSku(sku);
    await stockSku(sku, 5); // reserved, so the order is not rejected (which would hand the redemption back)
    const withCode = (customer: string) =>
      checkoutBody(sku, { customerId: customer, voucherCode: email.voucherCode });
    // Until the order service has consumed fulfillment.apology-voucher-issued the code is unknown (404, and
    // nothing is created); the first answer after that is the redemption.
    const first = await waitFor(
      'the apology voucher to be redeemable',
      async () => {
        const r = await checkout(withCode(customerId));
        return r.status === 404 && r.json.error === 'UNKNOWN_VOUCHER' ? undefined : r;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(first.status, 202, first.text);
    const order = await call('GET', `/v1/orders/${first.json.orderId}`);
    assert.equal(order.json.voucherCode, email.voucherCode);
    assert.equal(order.json.discount, 5_000, '10% off 50,000 VND');

    const stranger = await checkout(withCode(`c-${randomUUID()}`));
    assert.equal(stranger.status, 404, 'bound to the customer of the apologised order');
    assert.equal(stranger.json.error, 'UNKNOWN_VOUCHER');
    const second = await checkout(withCode(customerId));
    assert.equal(second.status, 409, second.text);
    assert.equal(second.json.error, 'VOUCHER_EXHAUSTED');
  });
});
