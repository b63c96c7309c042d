import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ACME, GLOBEX, PAYMENT, ledger, paymentIn, payments, reserve, sign, sources } from './payment-stack';

const post = (body: string, signature?: string) =>
  fetch(`${PAYMENT}/v1/psp/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { 'psp-signature': signature } : {}) },
    body,
  });

describe('payment webhooks: signed, deduped, tenant-bound', () => {
  let db: Awaited<ReturnType<typeof sources>>;
  let orderId: string;
  let event: {
    id: string;
    type: string;
    created: number;
    account: string;
    data: { object: Record<string, unknown> };
  };

  beforeAll(async () => {
    db = await sources();
    // tok_webhook_late keeps the payment pending for a while: long enough to attack it.
    orderId = await reserve(db.inventory, 'tok_webhook_late');
    const p = await paymentIn(orderId, (x) => x.state === 'pending' && x.pspReference !== null);
    const [charge] = (await ledger(orderId)).charges;
    event = {
      id: `evt_test_${randomBytes(8).toString('hex')}`,
      type: 'charge.succeeded',
      created: Math.floor(Date.now() / 1000),
      account: ACME.pspAccount,
      data: {
        object: { ...charge, status: 'succeeded', metadata: { paymentId: p.paymentId, tenantId: 'acme' } },
      },
    };
  });

  afterAll(async () => Promise.all(Object.values(db).map((d: DataSource) => d.destroy())));

  const unchanged = async () => {
    const [p] = await payments(orderId);
    assert.equal(p.state, 'pending');
    const rows = await db.payment.query(`SELECT count(*)::int AS n FROM psp_event WHERE event_id = $1`, [
      event.id,
    ]);
    assert.equal(rows[0].n, 0, 'no event recorded');
  };

  it('refuses a missing, malformed or wrong signature with 401 and changes nothing', async () => {
    const body = JSON.stringify(event);
    const cases: [string, string | undefined, string][] = [
      ['missing header', undefined, body],
      ['malformed header', 'v1=abc', body],
      ['another tenant secret', sign(GLOBEX.webhookSecret, body), body],
      ['tampered body', sign(ACME.webhookSecret, body), body.replace('charge.succeeded', 'charge.failed')],
      ['stale timestamp', sign(ACME.webhookSecret, body, Math.floor(Date.now() / 1000) - 3600), body],
      ['future timestamp', sign(ACME.webhookSecret, body, Math.floor(Date.now() / 1000) + 3600), body],
    ];
    for (const [what, header, sent] of cases) {
      const res = await post(sent, header);
      assert.equal(res.status, 401, what);
      assert.equal(((await res.json()) as { error: string }).error, 'WEBHOOK_UNAUTHENTICATED', what);
    }
    await unchanged();
  });

  it('refuses an unknown account with 401 and malformed bodies with 400', async () => {
    const unknown = JSON.stringify({ ...event, account: 'acct_nobody' });
    assert.equal((await post(unknown, sign(ACME.webhookSecret, unknown))).status, 401);
    assert.equal((await post('{not json', sign(ACME.webhookSecret, '{not json'))).status, 400);
    const invalid = JSON.stringify({ ...event, data: { object: { id: 42 } } });
    assert.equal((await post(invalid, sign(ACME.webhookSecret, invalid))).status, 400);
    assert.equal((await post('[]', sign(ACME.webhookSecret, '[]'))).status, 401);
    await unchanged();
  });

  it("an event signed by another tenant cannot move this tenant's payment", async () => {
    const foreign = JSON.stringify({ ...event, id: `${event.id}_globex`, account: GLOBEX.pspAccount });
    const res = await post(foreign, sign(GLOBEX.webhookSecret, foreign));
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { outcome: string }).outcome, 'unmatched');
    const [p] = await payments(orderId);
    assert.equal(p.state, 'pending');
  });

  it('200 concurrent deliveries of one event apply exactly once', async () => {
    const body = JSON.stringify(event);
    const answers = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const res = await post(body, sign(ACME.webhookSecret, body));
        return { status: res.status, outcome: ((await res.json()) as { outcome: string }).outcome };
      }),
    );
    assert.ok(
      answers.every((a) => a.status === 200),
      'every delivery answered 2xx',
    );
    assert.equal(answers.filter((a) => a.outcome === 'applied').length, 1);
    assert.equal(answers.filter((a) => a.outcome === 'duplicate').length, 199);
    const [p] = await payments(orderId);
    assert.equal(p.state, 'succeeded');
    assert.equal(p.history.filter((h) => h.to === 'succeeded').length, 1);
    const rows = await db.payment.query(
      `SELECT count(*)::int AS n FROM outbox WHERE type = 'payment.succeeded' AND saga_id = $1`,
      [orderId],
    );
    assert.equal(rows[0].n, 1, 'one payment.succeeded in the outbox');
  });
});
