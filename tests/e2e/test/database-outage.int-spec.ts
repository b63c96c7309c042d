import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { loadStackConfig, startPostgres, stopPostgres } from '@checkout/local-stack';
import { waitFor } from '@checkout/testing';
import { SagaEvents, SagaScenario } from '../src';

const CHECKOUTS = 24;
/** How long PostgreSQL stays down: far longer than the old 5 attempts over ~1.5 s, shorter than a session. */
const OUTAGE_MS = 20_000;

describe('a PostgreSQL crash in the middle of running sagas', () => {
  const config = loadStackConfig();
  let events: SagaEvents;
  let down = false;

  beforeAll(async () => {
    events = await new SagaEvents().start();
  });

  afterAll(async () => {
    if (down) await startPostgres(config, () => {});
    await events.stop();
  });

  it('parks nothing: every saga waits for the database and ends SHIPPED, stock and money conserved', async () => {
    const s = new SagaScenario(events);
    const sku = await s.sku('OUTAGE', CHECKOUTS);
    const orders = await Promise.all(
      Array.from({ length: CHECKOUTS }, () => s.place(s.body(sku, 'tok_success'))),
    );
    // Mid-run: some sagas have reached payment, the others are still on their way.
    await waitFor(
      'the first charge of the run',
      async () => (await Promise.all(orders.map((o) => s.api.ledger(o)))).some((l) => l.charges.length > 0),
      { timeoutMs: 60_000, intervalMs: 100 },
    );

    await stopPostgres(config, 'immediate');
    down = true;
    // The outage itself (a fault window, not a wait for a condition): every service keeps failing meanwhile.
    await delay(OUTAGE_MS);
    await startPostgres(config, () => {});
    down = false;
    // Crash recovery on a busy machine takes its time after the server accepts connections: the sagas' own
    // deadline starts once the order service can read its database again.
    await waitFor(
      'the order service to answer from its database again',
      async () => {
        try {
          return (await s.api.order(orders[0])) ?? undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );

    const settled = await Promise.allSettled(orders.map((orderId) => s.settle(orderId, 'SHIPPED')));
    const parked = orders.flatMap((o) => events.deadLettered(o));
    assert.deepEqual(
      parked.map(
        (m) => `${m.topic} ${m.key}: ${m.headers['dlq-code'] ?? ''} ${m.headers['dlq-reason'] ?? ''}`,
      ),
      [],
    );
    const lost = settled.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    assert.deepEqual(lost, [], `${lost.length} of ${CHECKOUTS} sagas did not end SHIPPED`);
    await s.expectConserved();
  });
});
