import { afterAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { SagaListSchema } from '../src/cli/saga-api.client';
import { ACME_KEY, TRACKER_URL, checkout, metricValue, pspCharges, pspFault, waitForSaga } from './support';

const TRACKER_LOG = join(loadStackConfig().logs, 'saga-tracker.log');
/** SAGA_STEP_TIMEOUT_PAYMENT_MS of the local stack (infra/local/src/services.ts). */
const PAYMENT_TIMEOUT_MS = 15_000;

async function stuckList(query: string) {
  const res = await fetch(`${TRACKER_URL}/v1/sagas?stuck=true${query}`, {
    headers: { authorization: `Bearer ${ACME_KEY}` },
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(res.status, 200);
  return SagaListSchema.parse(await res.json());
}

describe('a saga whose PSP never answers', () => {
  let orderId = '';
  afterAll(async () => {
    if (orderId) await pspFault(orderId, false);
  });

  it('is marked stuck waiting for payment, listed, logged once and counted by the gauge', async () => {
    orderId = await checkout('tok_success');
    // Every charge request of this order (and only this order) fails: payment stays `unknown`, retries and
    // reconciles, and never hears a yes or a no. The shared PSP keeps serving everyone else.
    await pspFault(orderId, true);

    const saga = await waitForSaga(orderId, 'stuck', (s) => s.state.stuck, PAYMENT_TIMEOUT_MS + 60_000);
    assert.deepEqual(
      await pspCharges(orderId),
      [],
      'the PSP never took a charge for the order (the fault was in place before the first request)',
    );
    assert.equal(saga.state.status, 'AWAITING_PAYMENT');
    assert.equal(saga.state.terminal, false);
    assert.equal(saga.state.stuckReason, 'step-timeout');
    assert.equal(saga.state.waitingFor?.step, 'payment');
    assert.equal(saga.state.waitingFor?.service, 'payment');
    assert.ok(saga.state.waitingFor!.waitedMs >= PAYMENT_TIMEOUT_MS, 'stuck only once the step is overdue');
    assert.ok(
      ['inventory.reserved', 'inventory.released'].includes(saga.state.lastStep.type),
      `last step ${saga.state.lastStep.type}`,
    );
    assert.ok(!saga.timeline.some((s) => s.service === 'payment'), 'no payment step at all');

    const listed = await stuckList('&waitingFor=payment&limit=500');
    const item = listed.sagas.find((s) => s.orderId === orderId);
    assert.ok(item, 'listed by GET /v1/sagas?stuck=true');
    assert.equal(item.stuck, true);
    assert.equal(item.waitingFor?.step, 'payment');
    assert.equal(item.lastStep.type, saga.state.lastStep.type);
    assert.ok(item.waitingFor!.waitedMs >= PAYMENT_TIMEOUT_MS);
    assert.ok(
      listed.sagas.every((s) => s.stuck && s.waitingFor?.step === 'payment'),
      'the filters apply',
    );

    // The gauge counts exactly the stuck sagas the API lists (both read the same rows; others may change
    // them meanwhile, so wait until one scrape and one listing agree).
    await waitFor(
      'the stuck gauge to count the listed payment-stuck sagas',
      async () => {
        const before = (await stuckList('&waitingFor=payment&limit=1')).total;
        const gauge = await metricValue('saga_stuck_sagas', { tenant: 'acme', waiting_for: 'payment' });
        const after = (await stuckList('&waitingFor=payment&limit=1')).total;
        return gauge !== undefined && gauge >= 1 && before === after && gauge === after;
      },
      { timeoutMs: 20_000, intervalMs: 300 },
    );

    const lines = readFileSync(TRACKER_LOG, 'utf8')
      .split('\n')
      .filter((l) => l.includes(orderId) && l.includes('"saga stuck"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 1, 'one log line when the saga becomes stuck');
    assert.equal(lines[0].tenantId, 'acme');
    assert.equal(lines[0].waitingFor, 'payment');
    assert.equal(lines[0].lastStep, saga.state.lastStep.type);
  });

  it('is no longer stuck once the PSP answers again and the saga moves on', async () => {
    assert.ok(orderId, 'the stuck saga above exists');
    await pspFault(orderId, false);
    // Reconciliation asks again with the same idempotency key; the charge now succeeds.
    const moved = await waitForSaga(orderId, 'moving again', (s) =>
      s.timeline.some((t) => t.type === 'payment.succeeded'),
    );
    const now = await waitForSaga(orderId, 'not stuck', (s) => !s.state.stuck);
    assert.equal(now.state.stuckSince, null);
    assert.ok(moved.timeline.some((t) => t.service === 'payment'));
    const listed = await stuckList('&limit=500');
    assert.ok(!listed.sagas.some((s) => s.orderId === orderId), 'gone from the stuck list');
  });
});
