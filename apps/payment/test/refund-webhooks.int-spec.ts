import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TopicReader, waitFor } from '@checkout/testing';
import {
  ACME,
  GLOBEX,
  PAYMENT,
  PSP,
  ledger,
  paymentIn,
  payments,
  reserve,
  sign,
  sources,
  unavailable,
} from './payment-stack';

const deliver = async (secret: string, event: unknown) => {
  const body = JSON.stringify(event);
  const res = await fetch(`${PAYMENT}/v1/psp/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'psp-signature': sign(secret, body) },
    body,
  });
  return { status: res.status, outcome: ((await res.json()) as { outcome?: string }).outcome };
};

describe('payment: refund webhooks from the PSP', () => {
  let db: Awaited<ReturnType<typeof sources>>;
  let reader: TopicReader;

  beforeAll(async () => {
    db = await sources();
    reader = await new TopicReader(['payment.refunded']).start();
  });

  afterAll(async () => {
    await reader.stop();
    await Promise.all(Object.values(db).map((d: DataSource) => d.destroy()));
  });

  it('a refund whose every answer is lost is completed by the signed refund.succeeded webhook, once', async () => {
    const orderId = await reserve(db.inventory, 'tok_success');
    await paymentIn(orderId, 'succeeded');
    // Every refund request is processed by the PSP and its answer lost: only the webhook can tell.
    await fetch(`${PSP}/v1/_admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        reference: orderId,
        operation: 'refund',
        status: 503,
        mode: 'after',
        times: 1000,
      }),
    });
    try {
      await unavailable(db.inventory, orderId);
      const p = await paymentIn(orderId, 'refunded');
      const refunded = p.history.filter((h) => h.to === 'refunded');
      assert.equal(refunded.length, 1);
      assert.equal(refunded[0].source, 'webhook');
      const l = await ledger(orderId);
      assert.equal(l.charges.length, 1);
      assert.equal(l.refunds.length, 1, 'asked again with the same key: refunded once');
      const event = l.events.find((e) => e.type === 'refund.succeeded')!;
      assert.equal(refunded[0].pspEventId, event.id);
      const [row] = await db.payment.query(`SELECT outcome FROM psp_event WHERE event_id = $1`, [event.id]);
      assert.equal(row.outcome, 'applied');
      assert.equal(p.refund?.state, 'succeeded');
      await reader.waitFor((m) => m.key === orderId);
      const published = reader.matching((m) => m.key === orderId);
      assert.equal(published.length, 1, 'one payment.refunded');
      assert.equal(
        published[0].json<{ payload: { pspRefundId: string } }>().payload.pspRefundId,
        l.refunds[0].id,
      );
    } finally {
      await fetch(`${PSP}/v1/_admin/faults?reference=${orderId}`, { method: 'DELETE' });
    }
  });

  it('tok_webhook_duplicate: the refund webhook delivered three times moves the payment once', async () => {
    const orderId = await reserve(db.inventory, 'tok_webhook_duplicate');
    await paymentIn(orderId, 'succeeded');
    await unavailable(db.inventory, orderId);
    await paymentIn(orderId, 'refunded');
    const l = await waitFor('three deliveries of the refund event', async () => {
      const x = await ledger(orderId);
      const event = x.events.find((e) => e.type === 'refund.succeeded');
      const ok = x.deliveries.filter((d) => d.eventId === event?.id && d.status === 200);
      return event && ok.length === 3 ? { event } : undefined;
    });
    const rows = await db.payment.query(`SELECT count(*)::int AS n FROM psp_event WHERE event_id = $1`, [
      l.event.id,
    ]);
    assert.equal(rows[0].n, 1);
    const [p] = await payments(orderId);
    assert.equal(p.history.filter((h) => h.to === 'refunded').length, 1);
    await reader.waitFor((m) => m.key === orderId);
    assert.equal(reader.matching((m) => m.key === orderId).length, 1);
    assert.equal((await ledger(orderId)).refunds.length, 1);
  });

  it('signed refund events about a charge we did not ask to refund, or another tenant, change nothing', async () => {
    const orderId = await reserve(db.inventory, 'tok_success');
    const paid = await paymentIn(orderId, 'succeeded');
    const [charge] = (await ledger(orderId)).charges;
    const event = (over: Record<string, unknown> = {}) => ({
      id: `evt_test_${randomUUID()}`,
      type: 'refund.succeeded',
      created: Math.floor(Date.now() / 1000),
      account: ACME.pspAccount,
      data: {
        object: {
          id: `re_test_${randomUUID()}`,
          charge: charge.id,
          amount: 50_000,
          currency: 'VND',
          status: 'succeeded',
          ...over,
        },
      },
    });
    assert.deepEqual(await deliver(ACME.webhookSecret, event()), { status: 200, outcome: 'unmatched' });
    assert.deepEqual(await deliver(ACME.webhookSecret, event({ charge: 'ch_unknown' })), {
      status: 200,
      outcome: 'unmatched',
    });
    assert.deepEqual(await deliver(GLOBEX.webhookSecret, { ...event(), account: GLOBEX.pspAccount }), {
      status: 200,
      outcome: 'unmatched',
    });
    assert.equal((await deliver(ACME.webhookSecret, event({ amount: 'all' }))).status, 400);
    const [p] = await payments(orderId);
    assert.equal(p.state, 'succeeded');
    assert.deepEqual(p.history, paid.history);
    assert.equal(p.refund, null);
  });
});
