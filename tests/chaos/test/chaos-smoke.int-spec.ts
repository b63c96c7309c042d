import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SagaEvents } from '@checkout/e2e';
import { SHORT_SCHEDULE } from '@checkout/faults';
import { loadStackConfig } from '@checkout/local-stack';
import { TopicReader } from '@checkout/testing';
import {
  ChaosContext,
  DEFAULT_OPTIONS,
  FaultCase,
  PSP_STORM_CASE,
  appKillCase,
  infraKillCase,
  linkCase,
  runFaultCase,
  sagaTopicReader,
} from '../src';

/**
 * The CI-cheap part of `npm run chaos` (issue 18): one app SIGKILL and one Connect SIGKILL with 50 checkouts
 * each, the PSP storm and order's database link through the fault proxy (a short schedule) with 30 each.
 */
const CASES: readonly { scenario: string; c: FaultCase; orders: number }[] = [
  { scenario: 'app-kill', c: appKillCase('payment'), orders: 50 },
  { scenario: 'infra-kill', c: infraKillCase('connect'), orders: 50 },
  { scenario: 'psp-storm', c: PSP_STORM_CASE, orders: 30 },
  { scenario: 'network-faults', c: linkCase('order', SHORT_SCHEDULE), orders: 30 },
];

describe('chaos smoke: parts of the stack die mid-run, every guarantee holds', () => {
  let reader: TopicReader;
  let ctx: ChaosContext;

  beforeAll(async () => {
    reader = await sagaTopicReader().start();
    ctx = {
      config: loadStackConfig(),
      reader,
      events: new SagaEvents(),
      options: { ...DEFAULT_OPTIONS, rate: 8, downMs: 3_000, settleMs: 180_000 },
      log: (line) => console.log(`[chaos] ${line}`),
    };
  });

  afterAll(async () => {
    await reader.stop();
  });

  for (const { scenario, c, orders } of CASES)
    it(`${scenario} ${c.name}: every saga ends, stock and money conserved, no event lost, DLQ empty`, async () => {
      const r = await runFaultCase(ctx, scenario, c, orders);
      assert.deepEqual(r.problems, [], `${r.case}: ${r.problems.length} problems`);
      assert.equal(r.orders, orders, 'every checkout was accepted in the end (retried with its key)');
      assert.deepEqual(
        { stuck: r.stuck, doubleCharges: r.doubleCharges, lost: r.lostEvents, dlq: r.dlq, ok: r.ok },
        { stuck: 0, doubleCharges: 0, lost: 0, dlq: 0, ok: true },
      );
      assert.ok(r.delivery.outboxRows >= orders, `${r.delivery.outboxRows} outbox rows for ${orders} orders`);
    });
});
