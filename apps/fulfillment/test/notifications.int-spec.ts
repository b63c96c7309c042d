import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { validateEvent } from '@checkout/contracts';
import { DataSource } from 'typeorm';
import { TopicReader, orderCreatedPayload } from '@checkout/testing';
import {
  GLOBEX_KEY,
  Publishers,
  consumed,
  fulfillmentDb,
  getJson,
  notificationsOf,
  orderPaid,
  sentNotification,
  unique,
} from './support';

describe('customer notifications, through the outboxes, Debezium and Kafka', () => {
  let publishers: Publishers;
  let fulfillment: DataSource;
  let vouchers: TopicReader;

  beforeAll(async () => {
    [publishers, fulfillment, vouchers] = await Promise.all([
      Publishers.open(),
      fulfillmentDb(),
      new TopicReader(['fulfillment.apology-voucher-issued']).start(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([publishers.close(), fulfillment.destroy(), vouchers.stop()]);
  });

  it('given order.paid, the customer gets one order confirmation, recorded as sent', async () => {
    const paid = orderPaid();

    const first = await publishers.publish('order', 'order.paid', paid);
    const again = await publishers.publish('order', 'order.paid', paid);

    const email = await sentNotification(paid.orderId, 'order_confirmation');
    assert.equal(email.customerId, paid.customerId);
    assert.match(email.subject, /is confirmed$/);
    assert.match(email.body, /Total paid: 50,000 VND/);
    assert.equal(email.voucherCode, null);
    assert.ok(email.sentAt);
    await consumed(fulfillment, first, again);
    assert.equal((await notificationsOf(paid.orderId)).length, 1);
  });

  it('given payment.failed, the customer of the order gets a payment-failed email', async () => {
    const created = orderCreatedPayload({
      customerId: unique('it-customer'),
      lines: [{ sku: unique('IT-N'), quantity: 1, unitPrice: 1000, discount: 0, lineTotal: 1000 }],
    });
    await publishers.publish('order', 'order.created', created);

    await publishers.publish('payment', 'payment.failed', {
      orderId: created.orderId,
      paymentId: randomUUID(),
      reason: 'card_declined',
      source: 'response',
    });

    const email = await sentNotification(created.orderId, 'payment_failed');
    assert.equal(email.customerId, created.customerId);
    assert.match(email.body, /card_declined/);
  });

  it('given paid but out of stock, the customer gets an apology carrying a fresh voucher code', async () => {
    const sku = unique('IT-GONE');
    const created = orderCreatedPayload({
      customerId: unique('it-customer'),
      lines: [{ sku, quantity: 1, unitPrice: 1000, discount: 0, lineTotal: 1000 }],
    });
    await publishers.publish('order', 'order.created', created);

    const unavailable = {
      orderId: created.orderId,
      lines: [{ sku, quantity: 1 }],
      shortSkus: [sku],
    };
    const first = await publishers.publish('inventory', 'inventory.unavailable-after-payment', unavailable);
    // The same fact again under a new event id (a producer retry): no second email, no second code.
    const again = await publishers.publish('inventory', 'inventory.unavailable-after-payment', unavailable);

    const email = await sentNotification(created.orderId, 'out_of_stock_apology');
    assert.equal(email.customerId, created.customerId);
    assert.match(email.voucherCode ?? '', /^SORRY-[A-Z2-9]{10}$/);
    // The code is issued to the order service in the email's transaction, so it can be redeemed.
    const [issued] = await vouchers.waitFor((m) => m.key === created.orderId);
    const event = validateEvent(issued.json());
    assert.equal(event.type, 'fulfillment.apology-voucher-issued');
    assert.equal(event.causationId, first.eventId);
    // order.created and the unavailable event travel on different topics: when fulfillment had not seen the
    // order yet, the voucher event names no customer and the order service binds it to its own record.
    const { customerId, ...payload } = event.payload as { customerId: string | null };
    assert.ok(customerId === created.customerId || customerId === null, `customerId ${customerId}`);
    assert.deepEqual(payload, {
      orderId: created.orderId,
      code: email.voucherCode,
      percentOff: 10,
      maxRedemptions: 1,
      notificationId: email.notificationId,
      issuedAt: (event.payload as { issuedAt: string }).issuedAt,
    });
    await consumed(fulfillment, first, again);
    assert.equal((await notificationsOf(created.orderId)).length, 1);
    assert.equal(vouchers.matching((m) => m.key === created.orderId).length, 1);
    assert.ok(email.body.includes(email.voucherCode!));
    assert.ok(email.body.includes(`${sku} turned out to be out of stock`));
    assert.deepEqual(await getJson(`/v1/notifications?orderId=${created.orderId}`, GLOBEX_KEY), {
      status: 200,
      body: { orderId: created.orderId, notifications: [] },
    });
  });

  it('an email whose event came before order.created waits for its recipient, then is sent', async () => {
    const created = orderCreatedPayload({ customerId: unique('it-customer') });
    const failed = await publishers.publish('payment', 'payment.failed', {
      orderId: created.orderId,
      paymentId: randomUUID(),
      reason: 'card_declined',
      source: 'webhook',
    });
    await consumed(fulfillment, failed);
    const [waiting] = await notificationsOf(created.orderId);
    assert.equal(waiting.customerId, null);
    assert.equal(waiting.status, 'pending');

    await publishers.publish('order', 'order.created', created);

    const email = await sentNotification(created.orderId, 'payment_failed');
    assert.equal(email.customerId, created.customerId);
  });
});
