import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { TopicReader, waitFor } from '@checkout/testing';
import { ledger, paymentIn, payments, reserve, sources } from './payment-stack';

/** Given inventory.reserved with each token of the PSP simulator, expect this end state and this ledger. */
const CASES: { token: string; state: 'succeeded' | 'failed'; via?: string; sawUnknown?: boolean }[] = [
  { token: 'tok_success', state: 'succeeded' },
  { token: 'tok_decline', state: 'failed' },
  { token: 'tok_timeout_success', state: 'succeeded', sawUnknown: true },
  { token: 'tok_timeout_decline', state: 'failed', sawUnknown: true },
  { token: 'tok_3ds', state: 'succeeded', via: 'webhook' },
  { token: 'tok_webhook_duplicate', state: 'succeeded' },
  { token: 'tok_webhook_lost', state: 'succeeded', via: 'reconciliation' },
  { token: 'tok_webhook_late', state: 'succeeded' },
  { token: 'tok_out_of_order', state: 'succeeded' },
];

describe('payment: every PSP token ends right, charged at most once', () => {
  let db: Awaited<ReturnType<typeof sources>>;
  let reader: TopicReader;
  const orders = new Map<string, string>();

  beforeAll(async () => {
    db = await sources();
    reader = await new TopicReader(['payment.succeeded', 'payment.failed', 'payment.refunded']).start();
    for (const c of CASES) orders.set(c.token, await reserve(db.inventory, c.token));
  });

  afterAll(async () => {
    await reader.stop();
    await Promise.all(Object.values(db).map((d: DataSource) => d.destroy()));
  });

  for (const c of CASES) {
    it(`${c.token}: ends ${c.state}${c.via ? ` (via ${c.via})` : ''}, one charge at the PSP, one event`, async () => {
      const orderId = orders.get(c.token)!;
      const p = await paymentIn(orderId, c.state, 40_000);
      const terminal = p.history.filter((h) => h.to === 'succeeded' || h.to === 'failed');
      assert.equal(terminal.length, 1, 'exactly one terminal transition');
      if (c.via) assert.equal(terminal[0].source, c.via);
      if (c.sawUnknown)
        assert.ok(
          p.history.some((h) => h.to === 'unknown'),
          'went through unknown, never straight to failed',
        );
      if (c.token === 'tok_timeout_success') assert.ok(!p.history.some((h) => h.to === 'failed'));
      const l = await ledger(orderId);
      assert.equal(l.charges.length, 1, 'one charge at the PSP whatever the retries');
      // Counted by the worker's claim; a re-ask (reconciliation, when the PSP never got the request) counts again.
      if (c.token === 'tok_success')
        assert.equal(p.chargeRequests, 1, 'one charge request sent, counted once');
      else assert.ok(p.chargeRequests >= 1);
      assert.equal(l.charges[0].status, c.state);
      assert.equal(l.refunds.length, 0);
      const topic = c.state === 'succeeded' ? 'payment.succeeded' : 'payment.failed';
      await reader.waitFor((m) => m.topic === topic && m.key === orderId);
      assert.equal(reader.matching((m) => m.key === orderId).length, 1, 'one payment event for the order');
    });
  }

  it('tok_webhook_duplicate: the three deliveries of one event apply once', async () => {
    const orderId = orders.get('tok_webhook_duplicate')!;
    const l = await waitFor('three deliveries', async () => {
      const x = await ledger(orderId);
      return x.deliveries.length >= 3 ? x : undefined;
    });
    assert.equal(new Set(l.deliveries.map((d) => d.eventId)).size, 1);
    const rows = await db.payment.query(`SELECT count(*)::int AS n FROM psp_event WHERE event_id = $1`, [
      l.deliveries[0].eventId,
    ]);
    assert.equal(rows[0].n, 1);
  });

  it('tok_out_of_order: the stale failed event is received and ignored', async () => {
    const orderId = orders.get('tok_out_of_order')!;
    const stale = await waitFor('the stale failure delivered', async () => {
      const x = await ledger(orderId);
      return x.events.find(
        (e) => e.type === 'charge.failed' && x.deliveries.some((d) => d.eventId === e.id && d.status === 200),
      );
    });
    const [row] = await db.payment.query(`SELECT outcome FROM psp_event WHERE event_id = $1`, [stale.id]);
    assert.equal(row.outcome, 'ignored');
    const [p] = await payments(orderId);
    assert.equal(p.state, 'succeeded');
  });
});
