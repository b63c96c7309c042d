import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DEV_PSP_CREDENTIALS } from '@checkout/service-kit';
import { loadStackConfig, waitFor } from '@checkout/testing';

const PSP = `http://127.0.0.1:${loadStackConfig().servicePorts['psp-simulator']}`;
const [ACME_PSP, GLOBEX_PSP] = DEV_PSP_CREDENTIALS;
const auth = { authorization: `Bearer ${ACME_PSP.secretKey}`, 'content-type': 'application/json' };

/** The simulator's ledger of one reference. */
interface Ledger {
  charges: { id: string; status: string; refunded: boolean }[];
  refunds: { id: string; charge: string; amount: number }[];
  events: { id: string; type: string; data: { object: { id: string; charge?: string; status: string } } }[];
  deliveries: { eventId: string; status: number | null }[];
}
const ledger = async (reference: string) =>
  (await (await fetch(`${PSP}/v1/_ledger?reference=${reference}`)).json()) as Ledger;
const fault = (body: Record<string, unknown>) =>
  fetch(`${PSP}/v1/_admin/faults`, { method: 'POST', headers: auth, body: JSON.stringify(body) });

const charge = (key: string, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${PSP}/v1/charges`, {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': key },
    body: JSON.stringify(body),
    signal,
  });

const refund = (key: string, chargeId: string) =>
  fetch(`${PSP}/v1/refunds`, {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': key },
    body: JSON.stringify({ charge: chargeId }),
  });

describe('PSP simulator: the external system', () => {
  it('charges once per Idempotency-Key, even for 20 concurrent requests', async () => {
    const reference = randomUUID();
    const body = { amount: 500, currency: 'VND', token: 'tok_success', reference };
    const answers = await Promise.all(Array.from({ length: 20 }, () => charge(`k-${reference}`, body)));
    const ids = new Set(await Promise.all(answers.map(async (r) => ((await r.json()) as { id: string }).id)));
    assert.equal(ids.size, 1);
    assert.deepEqual(answers.map((r) => r.status).sort(), [...Array(19).fill(200), 201]);
    const ledger = (await (await fetch(`${PSP}/v1/_ledger?reference=${reference}`)).json()) as {
      charges: unknown[];
    };
    assert.equal(ledger.charges.length, 1);
  });

  it('refuses a reused key with another body, a missing key, a bad account and an unknown token', async () => {
    const reference = randomUUID();
    await charge(`k-${reference}`, { amount: 500, currency: 'VND', token: 'tok_success', reference });
    assert.equal(
      (await charge(`k-${reference}`, { amount: 501, currency: 'VND', token: 'tok_success', reference }))
        .status,
      422,
    );
    const noKey = await fetch(`${PSP}/v1/charges`, { method: 'POST', headers: auth, body: '{}' });
    assert.equal(noKey.status, 400);
    const badAccount = await fetch(`${PSP}/v1/charges`, {
      method: 'POST',
      headers: { ...auth, authorization: 'Bearer nope' },
    });
    assert.equal(badAccount.status, 401);
    assert.equal(
      (await charge(randomUUID(), { amount: 1, currency: 'VND', token: 'tok_nope', reference })).status,
      400,
    );
  });

  it('refunds once per key, never more than was captured; lookups by reference and time window', async () => {
    const reference = randomUUID();
    const since = new Date(Date.now() - 1000).toISOString();
    const c = (await (
      await charge(randomUUID(), { amount: 700, currency: 'VND', token: 'tok_success', reference })
    ).json()) as { id: string };
    const refund = (key: string) =>
      fetch(`${PSP}/v1/refunds`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': key },
        body: JSON.stringify({ charge: c.id }),
      });
    const key = randomUUID();
    assert.equal((await refund(key)).status, 201);
    assert.equal((await refund(key)).status, 200);
    assert.equal((await refund(randomUUID())).status, 400, 'already refunded');
    const byRef = (await (
      await fetch(`${PSP}/v1/charges?reference=${reference}`, { headers: auth })
    ).json()) as { data: { refunded: boolean }[] };
    assert.equal(byRef.data.length, 1);
    assert.equal(byRef.data[0].refunded, true);
    const window = (await (
      await fetch(`${PSP}/v1/charges?from=${since}&limit=1000`, { headers: auth })
    ).json()) as { data: { id: string }[] };
    assert.ok(window.data.some((x) => x.id === c.id));
    const globex = (await (
      await fetch(`${PSP}/v1/charges?reference=${reference}`, {
        headers: { authorization: `Bearer ${GLOBEX_PSP.secretKey}` },
      })
    ).json()) as { data: unknown[] };
    assert.equal(globex.data.length, 0, 'accounts do not see each other');
  });

  it('answers tok_decline as failed and tok_3ds as pending', async () => {
    const declined = (await (
      await charge(randomUUID(), {
        amount: 1,
        currency: 'VND',
        token: 'tok_decline',
        reference: randomUUID(),
      })
    ).json()) as { status: string };
    assert.equal(declined.status, 'failed');
    const threeDs = (await (
      await charge(randomUUID(), { amount: 1, currency: 'VND', token: 'tok_3ds', reference: randomUUID() })
    ).json()) as { status: string };
    assert.equal(threeDs.status, 'pending');
  });

  it('scripted faults answer 5xx and do nothing', async () => {
    const reference = randomUUID();
    await fetch(`${PSP}/v1/_admin/faults`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ reference, operation: 'charge', status: 503, times: 1 }),
    });
    const body = { amount: 5, currency: 'VND', token: 'tok_success', reference };
    assert.equal((await charge('same', body)).status, 503);
    const ledger = (await (await fetch(`${PSP}/v1/_ledger?reference=${reference}`)).json()) as {
      charges: unknown[];
    };
    assert.equal(ledger.charges.length, 0);
    assert.equal((await charge(`k2-${reference}`, body)).status, 201);
    const knobs = (await (await fetch(`${PSP}/v1/_admin/knobs`)).json()) as { errorRate: number };
    assert.equal(typeof knobs.errorRate, 'number');
  });

  it('a fault scripted for an amount fails every reference of that amount until it is cleared', async () => {
    const amount = 70_000 + Math.floor(Math.random() * 10_000);
    const [first, second, other] = [randomUUID(), randomUUID(), randomUUID()];
    assert.equal(
      (await fault({ reference: first, amount, operation: 'charge' })).status,
      400,
      'reference and amount together are refused',
    );
    assert.equal((await fault({ operation: 'charge' })).status, 400, 'a fault needs a target');
    assert.equal((await fault({ amount, operation: 'charge', times: 10 })).status, 201);

    const sale = (reference: string, amt = amount) => ({
      amount: amt,
      currency: 'VND',
      token: 'tok_success',
      reference,
    });
    assert.equal((await charge(`a-${first}`, sale(first))).status, 503);
    assert.equal((await charge(`a-${second}`, sale(second))).status, 503);
    assert.equal(
      (await charge(`a-${other}`, sale(other, amount + 1))).status,
      201,
      'another amount is not hit',
    );
    assert.deepEqual([(await ledger(first)).charges, (await ledger(second)).charges], [[], []]);

    const cleared = await fetch(`${PSP}/v1/_admin/faults?amount=${amount}`, { method: 'DELETE' });
    assert.deepEqual(await cleared.json(), { removed: 1 });
    assert.equal((await charge(`b-${first}`, sale(first))).status, 201);
    const refused = await fetch(`${PSP}/v1/_admin/faults?amount=-3`, { method: 'DELETE' });
    assert.equal(refused.status, 400);
  });

  it('sends a signed refund.succeeded webhook for a new refund (once per refund, not per replay)', async () => {
    const reference = randomUUID();
    const c = (await (
      await charge(randomUUID(), { amount: 900, currency: 'VND', token: 'tok_success', reference })
    ).json()) as { id: string };
    const key = randomUUID();
    const first = (await (await refund(key, c.id)).json()) as { id: string };
    assert.equal((await refund(key, c.id)).status, 200, 'replayed');
    // The payment service answers 2xx only to a correctly signed event (it has no refund of ours to apply).
    const l = await waitFor('the refund webhook delivered and accepted', async () => {
      const x = await ledger(reference);
      const event = x.events.find((e) => e.type === 'refund.succeeded');
      return event && x.deliveries.some((d) => d.eventId === event.id && d.status === 200)
        ? { x, event }
        : undefined;
    });
    assert.equal(l.x.events.filter((e) => e.type === 'refund.succeeded').length, 1);
    assert.equal(l.event.data.object.id, first.id);
    assert.equal(l.event.data.object.charge, c.id);
    assert.equal(l.event.data.object.status, 'succeeded');
  });

  it('an "after" fault does the work and loses the answer; the same key then replays it', async () => {
    const reference = randomUUID();
    await fault({ reference, operation: 'charge', status: 502, mode: 'after', times: 1 });
    const body = { amount: 5, currency: 'VND', token: 'tok_success', reference };
    assert.equal((await charge(`k-${reference}`, body)).status, 502);
    assert.equal((await ledger(reference)).charges.length, 1, 'charged although the answer was lost');
    const again = await charge(`k-${reference}`, body);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal((await ledger(reference)).charges.length, 1);
  });

  it('a delay-only fault (status null) slows one request past its caller, which is still processed', async () => {
    const reference = randomUUID();
    await fault({ reference, operation: 'charge', status: null, delayMs: 3_000, times: 1 });
    const body = { amount: 5, currency: 'VND', token: 'tok_success', reference };
    await assert.rejects(charge(`k-${reference}`, body, AbortSignal.timeout(200)), { name: 'TimeoutError' });
    const l = await waitFor('the slow charge made', async () => {
      const x = await ledger(reference);
      return x.charges.length === 1 ? x : undefined;
    });
    assert.equal(l.charges[0].status, 'succeeded');
    assert.equal(
      (await charge(`k-${reference}`, body)).status,
      200,
      'the fault was used up: no delay, replay',
    );
  });
});
