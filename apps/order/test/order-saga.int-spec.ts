import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventType, PayloadOf, SagaEvent, validateEvent } from '@checkout/contracts';
import { InboxTransport, NonRetryableError } from '@checkout/messaging';
import { sagaEvent, scratchDatabase } from '@checkout/testing';
import { CatalogRepository } from '../src/catalog/database/catalog.repository';
import { MIGRATIONS } from '../src/migrations';
import { OrderRepository } from '../src/orders/database/order.repository';
import { orderTransport } from './order-runtime';

const tenantId = 'acme';
const orders = new OrderRepository();
const catalog = new CatalogRepository();

/** An envelope of type T for the order, as another service would publish it. */
const event = <T extends EventType>(type: T, orderId: string, payload: PayloadOf<T>): SagaEvent<T> =>
  sagaEvent(type, tenantId, orderId, payload);

describe('order saga reactions (handlers on a scratch order database): given events, expect state and events', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: DataSource;
  let transport: InboxTransport;
  const gateCalls: string[] = [];

  beforeAll(async () => {
    scratch = await scratchDatabase('order_saga', MIGRATIONS, 5);
    db = scratch.dataSource;
    transport = orderTransport(db, { name: 'order-saga-spec', tenantId, gateCalls });
  });
  afterAll(async () => {
    await scratch.drop();
  });

  /** What the consumer runtime does: inbox row and handler in one transaction (a redelivery is skipped), then the gate. */
  const deliver = async (e: SagaEvent) => {
    await transport.apply(e.type, [e]);
  };

  const newOrder = async (opts: { voucher?: string; hold?: string } = {}) => {
    const id = randomUUID();
    await db.transaction(async (tx) => {
      await orders.insert(tx, {
        id,
        tenantId,
        customerId: 'c1',
        currency: 'VND',
        lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 50_000, discount: 10_000, lineTotal: 90_000 }],
        subtotal: 100_000,
        discount: 10_000,
        total: 90_000,
        voucherCode: opts.voucher ?? null,
        paymentToken: 'tok_success',
        gateHoldId: opts.hold ?? null,
        idempotencyKey: randomUUID(),
      });
      if (opts.voucher) assert.notEqual(await catalog.redeemVoucher(tx, tenantId, opts.voucher, id), null);
    });
    return id;
  };
  const status = async (id: string) => (await orders.find(db, tenantId, id))!;
  const published = async (id: string) =>
    (await db.query(`SELECT type, payload FROM outbox WHERE saga_id = $1 ORDER BY sequence`, [id])) as {
      type: string;
      payload: SagaEvent;
    }[];

  const reserved = (id: string) =>
    event('inventory.reserved', id, {
      orderId: id,
      lines: [{ sku: 'SKU-1', quantity: 2 }],
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
      customerId: 'c1',
      amount: 90_000,
      currency: 'VND',
      paymentToken: 'tok_success',
    });
  const paymentId = randomUUID();
  const succeeded = (id: string) =>
    event('payment.succeeded', id, {
      orderId: id,
      paymentId,
      amount: 90_000,
      currency: 'VND',
      pspReference: 'ch_1',
      source: 'webhook',
      succeededAt: '2026-12-02T12:00:00.000Z',
    });
  const committed = (id: string) =>
    event('inventory.committed', id, {
      orderId: id,
      lines: [{ sku: 'SKU-1', quantity: 2 }],
      reReserved: false,
    });
  /** An order charged whose stock ran out: BACKORDERED. */
  const backorderedOrder = async () => {
    const id = await newOrder();
    await deliver(reserved(id));
    await deliver(succeeded(id));
    await deliver(
      event('inventory.backordered', id, { orderId: id, lines: [{ sku: 'SKU-1', quantity: 2 }] }),
    );
    assert.equal((await status(id)).status, 'BACKORDERED');
    return id;
  };
  const failed = (id: string) =>
    event('payment.failed', id, { orderId: id, paymentId, reason: 'declined', source: 'webhook' });

  it('given reserved, succeeded, committed: PAID with one order.paid carrying the snapshot and the payment', async () => {
    const id = await newOrder({ hold: 'h-paid' });
    await deliver(reserved(id));
    assert.equal((await status(id)).status, 'AWAITING_PAYMENT');
    await deliver(succeeded(id));
    assert.equal(
      (await status(id)).status,
      'AWAITING_PAYMENT',
      'money alone is not PAID: stock not committed yet',
    );
    assert.equal((await status(id)).paymentState, 'succeeded');
    await deliver(committed(id));
    const o = await status(id);
    assert.equal(o.status, 'PAID');
    const paid = (await published(id)).filter((e) => e.type === 'order.paid');
    assert.equal(paid.length, 1);
    assert.deepEqual(paid[0].payload.payload, {
      orderId: id,
      tenantId,
      customerId: 'c1',
      currency: 'VND',
      lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 50_000, discount: 10_000, lineTotal: 90_000 }],
      subtotal: 100_000,
      discount: 10_000,
      total: 90_000,
      voucherCode: null,
      paymentId,
      pspReference: 'ch_1',
      paidAt: '2026-12-02T12:00:00.000Z',
    });
    assert.ok(gateCalls.includes('settle:h-paid'));
    const history = await orders.history(db, tenantId, id);
    assert.deepEqual(
      history.map((h) => h.to),
      ['PENDING', 'AWAITING_PAYMENT', 'PAID'],
    );
    // Child rows are read tenant-scoped too, not only through the tenant-checked parent.
    assert.deepEqual(await orders.history(db, 'globex', id), []);
  });

  it('given committed before succeeded before reserved (out of order), still PAID once, and never backwards', async () => {
    const id = await newOrder();
    await deliver(committed(id));
    await deliver(succeeded(id));
    assert.equal((await status(id)).status, 'PAID');
    await deliver(reserved(id)); // late
    await deliver(failed(id)); // stale failure after the success
    await deliver(
      event('inventory.rejected', id, {
        orderId: id,
        lines: [{ sku: 'SKU-1', quantity: 2 }],
        shortSkus: ['SKU-1'],
        reason: 'insufficient_stock',
      }),
    );
    const o = await status(id);
    assert.equal(o.status, 'PAID');
    assert.equal(o.paymentState, 'succeeded');
    assert.equal((await published(id)).filter((e) => e.type === 'order.paid').length, 1);
    await deliver(
      event('fulfillment.shipment-created', id, {
        orderId: id,
        shipmentId: randomUUID(),
        carrier: 'ghn',
        trackingNumber: 'T1',
      }),
    );
    assert.equal((await status(id)).status, 'SHIPPED');
    await deliver(committed(id)); // a new duplicate event id: still nothing
    assert.equal((await status(id)).status, 'SHIPPED');
  });

  it('given duplicates of every event, applies each once', async () => {
    const id = await newOrder();
    const r = reserved(id);
    const s = succeeded(id);
    const c = committed(id);
    for (const e of [r, r, s, c, s, c, r]) await deliver(e);
    // The same facts under new event ids (a producer retry) change nothing either.
    await deliver(committed(id));
    await deliver(succeeded(id));
    assert.equal((await status(id)).status, 'PAID');
    assert.equal((await published(id)).filter((e) => e.type === 'order.paid').length, 1);
    assert.equal((await orders.history(db, tenantId, id)).length, 3);
  });

  it('given payment.failed: CANCELLED, order.cancelled(payment_failed), voucher and gate units back; a late success does not revive it', async () => {
    await catalog.createVoucher(db, tenantId, { code: 'SAGA10', percentOff: 10, maxRedemptions: 5 });
    const id = await newOrder({ voucher: 'SAGA10', hold: 'h-failed' });
    await deliver(reserved(id));
    await deliver(failed(id));
    await deliver(failed(id));
    const o = await status(id);
    assert.equal(o.status, 'CANCELLED');
    assert.equal(o.paymentState, 'failed');
    const cancelled = (await published(id)).filter((e) => e.type === 'order.cancelled');
    assert.equal(cancelled.length, 1);
    assert.deepEqual(cancelled[0].payload.payload, {
      orderId: id,
      reason: 'payment_failed',
      refundIfCharged: false,
    });
    assert.equal((await catalog.voucher(db, tenantId, 'SAGA10'))!.redeemed, 0);
    assert.ok(gateCalls.some((c) => c.startsWith('giveBack:h-failed')));
    await deliver(succeeded(id));
    await deliver(committed(id));
    assert.equal((await status(id)).status, 'CANCELLED');
  });

  it('given inventory.rejected: REJECTED, voucher returned once', async () => {
    await catalog.createVoucher(db, tenantId, { code: 'REJ10', percentOff: 10, maxRedemptions: 5 });
    const id = await newOrder({ voucher: 'REJ10', hold: 'h-rej' });
    const rej = event('inventory.rejected', id, {
      orderId: id,
      lines: [{ sku: 'SKU-1', quantity: 2 }],
      shortSkus: ['SKU-1'],
      reason: 'insufficient_stock',
    });
    await deliver(rej);
    await deliver(event('inventory.rejected', id, rej.payload));
    assert.equal((await status(id)).status, 'REJECTED');
    assert.equal((await catalog.voucher(db, tenantId, 'REJ10'))!.redeemed, 0);
    await deliver(reserved(id));
    assert.equal((await status(id)).status, 'REJECTED');
  });

  it('given backordered, then the restock fills it (inventory.committed): PAID, one order.paid', async () => {
    const id = await backorderedOrder();
    assert.equal((await published(id)).filter((e) => e.type === 'order.paid').length, 0);

    await deliver(committed(id));
    await deliver(committed(id));

    assert.equal((await status(id)).status, 'PAID', 'the filled backorder is paid and ships');
    assert.equal((await published(id)).filter((e) => e.type === 'order.paid').length, 1);
  });

  it('given backordered then refunded: BACKORDERED, then REFUNDED, never back', async () => {
    const id = await backorderedOrder();
    await deliver(
      event('payment.refunded', id, {
        orderId: id,
        paymentId,
        amount: 90_000,
        currency: 'VND',
        pspRefundId: 're_1',
        reason: 'unavailable',
      }),
    );
    const o = await status(id);
    assert.equal(o.status, 'REFUNDED');
    assert.equal(o.paymentState, 'refunded');
    await deliver(succeeded(id));
    await deliver(committed(id));
    assert.equal((await status(id)).status, 'REFUNDED', 'a late commit does not bring a refunded order back');
    assert.equal((await status(id)).paymentState, 'refunded');
  });

  it('ignores events for an order it does not know (another tenant or another system)', async () => {
    const id = randomUUID();
    await deliver(reserved(id));
    await deliver(succeeded(id));
    await deliver(committed(id));
    assert.equal(await orders.find(db, tenantId, id), undefined);
    assert.equal((await published(id)).length, 0);
  });

  const apology = (id: string, code: string, customerId: string | null = null, tenant = tenantId) =>
    validateEvent({
      ...event('fulfillment.apology-voucher-issued', id, {
        orderId: id,
        customerId,
        code,
        percentOff: 10,
        maxRedemptions: 1,
        notificationId: randomUUID(),
        issuedAt: new Date().toISOString(),
      }),
      tenantId: tenant,
    }) as SagaEvent<'fulfillment.apology-voucher-issued'>;

  it("given fulfillment.apology-voucher-issued: a single-use voucher bound to the order's customer, issued once", async () => {
    const id = await newOrder();
    const code = `SORRY-${randomUUID().slice(0, 8).toUpperCase()}`;
    const issued = apology(id, code, null);
    await deliver(issued);
    await deliver(issued);
    await deliver(apology(id, `${code}X`, 'someone-else')); // a producer retry under a new code changes nothing
    assert.deepEqual(await catalog.voucher(db, tenantId, code), {
      code,
      percentOff: 10,
      maxRedemptions: 1,
      redeemed: 0,
      customerId: 'c1',
    });
    assert.equal(await catalog.voucher(db, tenantId, `${code}X`), undefined);
  });

  it('issues the apology voucher of an order it does not know for the customer fulfillment names', async () => {
    const id = randomUUID();
    const code = `SORRY-${randomUUID().slice(0, 8).toUpperCase()}`;
    await deliver(apology(id, code, 'c-elsewhere'));
    assert.equal((await catalog.voucher(db, tenantId, code))?.customerId, 'c-elsewhere');
  });

  it('parks an apology voucher of an unknown tenant, or whose code another voucher has, on the DLQ', async () => {
    const id = await newOrder();
    await assert.rejects(
      deliver(apology(id, 'SORRY-NOTENANT', null, 'nobody')),
      (e: unknown) => e instanceof NonRetryableError && e.code === 'ORDER.UNKNOWN_TENANT',
    );
    await catalog.createVoucher(db, tenantId, { code: 'SORRY-TAKEN', percentOff: 10, maxRedemptions: 5 });
    await assert.rejects(
      deliver(apology(id, 'SORRY-TAKEN')),
      (e: unknown) => e instanceof NonRetryableError && e.code === 'ORDER.VOUCHER_CODE_TAKEN',
    );
    assert.equal((await catalog.voucher(db, tenantId, 'SORRY-TAKEN'))?.maxRedemptions, 5);
  });
});
