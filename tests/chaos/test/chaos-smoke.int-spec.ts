import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SagaEvents } from '@checkout/e2e';
import { loadStackConfig } from '@checkout/local-stack';
import { TopicReader } from '@checkout/testing';
import {
  ChaosContext,
  DEFAULT_OPTIONS,
  appKillCase,
  infraKillCase,
  runFaultCase,
  sagaTopicReader,
} from '../src';

/** The CI-cheap part of `npm run chaos` (issue 18): one app SIGKILL and one Connect SIGKILL, ~50 orders each. */
const ORDERS = 50;

describe('chaos smoke: parts of the stack die mid-run, every guarantee holds', () => {
  let reader: TopicReader;
  let ctx: ChaosContext;

  beforeAll(async () => {
    reader = await sagaTopicReader().start();
    ctx = {
      config: loadStackConfig(),
      reader,
      events: new SagaEvents(),
      options: { ...DEFAULT_OPTIONS, orders: ORDERS, rate: 8, downMs: 3_000, settleMs: 180_000 },
      log: (line) => console.log(`[chaos] ${line}`),
    };
  });

  afterAll(async () => {
    await reader.stop();
  });

  for (const [scenario, c] of [
    ['app-kill', appKillCase('payment')],
    ['infra-kill', infraKillCase('connect')],
  ] as const)
    it(`${scenario} ${c.name}: every saga ends, stock and money conserved, no event lost, DLQ empty`, async () => {
      const r = await runFaultCase(ctx, scenario, c);
      assert.deepEqual(r.problems, [], `${r.case}: ${r.problems.length} problems`);
      assert.equal(r.orders, ORDERS);
      assert.deepEqual(
        { stuck: r.stuck, doubleCharges: r.doubleCharges, lost: r.lostEvents, dlq: r.dlq, ok: r.ok },
        { stuck: 0, doubleCharges: 0, lost: 0, dlq: 0, ok: true },
      );
      assert.ok(r.delivery.outboxRows >= ORDERS, `${r.delivery.outboxRows} outbox rows for ${ORDERS} orders`);
    });
});
