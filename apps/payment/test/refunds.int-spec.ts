import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TopicReader, waitFor } from '@checkout/testing';
import { transition } from '../src/payment/database/payment.repository';
import {
  ACME,
  PAYMENT,
  PAYMENT_INTERNAL,
  PSP,
  ledger,
  paymentIn,
  payments,
  publish,
  reserve,
  sign,
  sources,
  unavailable,
} from './payment-stack';

describe('payment: the seed trace, refunds and the orphan sweep', () => {
  let db: Awaited<ReturnType<typeof sources>>;
  let reader: TopicReader;

  beforeAll(async () => {
    db = await sources();
    reader = await new TopicReader(['payment.succeeded', 'payment.failed', 'payment.refunded']).start();
  });

  afterAll(async () => {
    await reader.stop();
    await Promise.all(Object.values(db).map((d: DataSource) => d.destroy()));
  });

  it('seed trace: pending -> unknown (timeout) -> webhook succeeded -> duplicate ignored -> late failed ignored -> refunded', async () => {
    const orderId = await reserve(db.inventory, 'tok_timeout_success');
    const unknown = await paymentIn(orderId, 'unknown');
    assert.deepEqual(
      unknown.history.map((h) => h.to),
      ['created', 'pending', 'unknown'],
    );

    const succeeded = await paymentIn(orderId, 'succeeded');
    assert.equal(succeeded.history.at(-1)!.source, 'webhook');

    const l = await ledger(orderId);
    const body = JSON.stringify(l.events[0]);
    const again = await fetch(`${PAYMENT}/v1/psp/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'psp-signature': sign(ACME.webhookSecret, body) },
      body,
    });
    assert.equal(((await again.json()) as { outcome: string }).outcome, 'duplicate');

    // The old "a timeout means failed" handler, running late: the state machine ignores it.
    const late = await db.payment.transaction((tx) =>
      transition(tx, { paymentId: succeeded.paymentId, tenantId: 'acme', to: 'failed', source: 'response' }),
    );
    assert.equal(late.outcome, 'ignored');

    await unavailable(db.inventory, orderId);
    const refunded = await paymentIn(orderId, 'refunded');
    assert.deepEqual(
      refunded.history.map((h) => h.to),
      ['created', 'pending', 'unknown', 'succeeded', 'refunded'],
    );
    const after = await ledger(orderId);
    assert.equal(after.charges.length, 1);
    assert.equal(after.refunds.length, 1);
    await reader.waitFor((m) => m.topic === 'payment.refunded' && m.key === orderId);
    assert.equal(reader.matching((m) => m.key === orderId && m.topic === 'payment.failed').length, 0);
    // A second trigger for the same order refunds nothing more.
    await unavailable(db.inventory, orderId);
    await publish(db.inventory, 'inventory', 'inventory.reserved', 'acme', orderId, {
      orderId,
      lines: [{ sku: 'SKU-PAY', quantity: 1 }],
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      customerId: 'c-pay',
      amount: 50_000,
      currency: 'VND',
      paymentToken: 'tok_success',
    });
    await reader.waitFor((m) => m.topic === 'payment.refunded' && m.key === orderId);
    assert.equal((await ledger(orderId)).refunds.length, 1);
    assert.equal((await ledger(orderId)).charges.length, 1);

    // Another tenant sees none of it, and a child row under another tenant never joins this tenant's view.
    assert.deepEqual(await payments(orderId, 'globex-dev-key'), []);
    await db.payment.query(
      `INSERT INTO payment_transition (payment_id, tenant_id, from_state, to_state, source)
       VALUES ($1, 'globex', 'refunded', 'failed', 'response')`,
      [refunded.paymentId],
    );
    assert.deepEqual(
      (await payments(orderId)).flatMap((p) => p.history.map((h) => h.to)),
      ['created', 'pending', 'unknown', 'succeeded', 'refunded'],
    );
  });

  it('money that arrives for an order cancelled while unknown is refunded, once', async () => {
    const orderId = await reserve(db.inventory, 'tok_timeout_success');
    await paymentIn(orderId, 'unknown');
    await publish(db.order, 'order', 'order.cancelled', 'acme', orderId, {
      orderId,
      reason: 'timeout',
      refundIfCharged: true,
    });
    const p = await paymentIn(orderId, 'refunded');
    assert.ok(p.history.some((h) => h.to === 'succeeded'));
    const l = await ledger(orderId);
    assert.equal(l.charges.length, 1);
    assert.equal(l.refunds.length, 1);
  });

  it('a refund the PSP keeps refusing is parked as refund_failed, visible, and retried by an operator', async () => {
    const orderId = await reserve(db.inventory, 'tok_success');
    await paymentIn(orderId, 'succeeded');
    await fetch(`${PSP}/v1/_admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reference: orderId, operation: 'refund', status: 503, times: 1000 }),
    });
    await unavailable(db.inventory, orderId);
    const parked = await paymentIn(orderId, (p) => p.refund?.state === 'refund_failed');
    assert.equal(parked.state, 'succeeded');
    assert.ok(parked.refund!.attempts >= 2);
    const list = (await (
      await fetch(`${PAYMENT}/v1/payments/refunds?state=refund_failed`, {
        headers: { authorization: 'Bearer acme-dev-key' },
      })
    ).json()) as { refunds: { refundId: string }[] };
    assert.ok(list.refunds.some((r) => r.refundId === parked.refund!.refundId));
    const metrics = await (await fetch(`${PAYMENT_INTERNAL}/metrics`)).text();
    assert.match(metrics, /payment_refunds_parked_total\{service="payment"\} [1-9]/);
    assert.equal((await ledger(orderId)).refunds.length, 0);

    await fetch(`${PSP}/v1/_admin/faults?reference=${orderId}`, { method: 'DELETE' });
    const retry = await fetch(`${PAYMENT}/v1/payments/refunds/${parked.refund!.refundId}/retry`, {
      method: 'POST',
      headers: { authorization: 'Bearer globex-dev-key' },
    });
    assert.equal(retry.status, 404, "another tenant cannot touch this tenant's refund");
    const ok = await fetch(`${PAYMENT}/v1/payments/refunds/${parked.refund!.refundId}/retry`, {
      method: 'POST',
      headers: { authorization: 'Bearer acme-dev-key' },
    });
    assert.equal(ok.status, 202);
    // The retry wakes the refund worker (it would otherwise sleep up to PAYMENT_REFUND_MAX_SLEEP_MS, 30 s).
    await paymentIn(orderId, 'refunded', 10_000);
    assert.equal((await ledger(orderId)).refunds.length, 1);
  });

  it('the orphan sweep finds a captured charge without a payment of ours and refunds it', async () => {
    const reference = randomUUID();
    const res = await fetch(`${PSP}/v1/charges`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${ACME.pspSecretKey}`,
        'idempotency-key': reference,
      },
      body: JSON.stringify({ amount: 1234, currency: 'VND', token: 'tok_success', reference }),
    });
    assert.equal(res.status, 201);
    await waitFor(
      'the orphan refunded',
      async () => {
        const l = await ledger(reference);
        return l.refunds.length === 1 ? l : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const orphans = (await (
      await fetch(`${PAYMENT}/v1/payments/orphan-charges`, {
        headers: { authorization: 'Bearer acme-dev-key' },
      })
    ).json()) as { orphanCharges: { reference: string; action: string }[] };
    assert.equal(orphans.orphanCharges.find((o) => o.reference === reference)?.action, 'refund');
  });
});
