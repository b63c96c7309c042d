import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { currentStack } from '../src/harness';
import { run } from '../src/scenarios/network-faults';

/** Issue 18, scenario 4, CI-sized: order <-> PostgreSQL through the fault proxy, short faults, a few dozen orders. */
describe('network faults between order and PostgreSQL', () => {
  it('ends every saga with stock conserved, nothing charged twice and no event lost', async () => {
    const row = await run(currentStack(), {
      checkouts: 30,
      perSecond: 5,
      schedule: [
        { mode: { kind: 'latency', latencyMs: 30, jitterMs: 60 }, forMs: 2_000 },
        { mode: { kind: 'stall' }, forMs: 1_500 },
        { mode: { kind: 'reset' }, forMs: 300 },
        { mode: { kind: 'blackhole' }, forMs: 3_000 },
      ],
      recoverWithinMs: 120_000,
    });
    console.log(JSON.stringify(row, null, 2));
    assert.deepEqual(row.violations, []);
    assert.equal(row.stuck, 0, 'every saga ended');
    assert.equal(row.doubleCharges, 0);
    assert.equal(row.lostEvents, 0);
    assert.ok(Number(row.details.resets) > 0, 'the proxy reset connections at all');
    assert.equal(row.orders, 30, 'every checkout was accepted in the end (retried with its key)');
    assert.ok(row.ok);
  });
});
