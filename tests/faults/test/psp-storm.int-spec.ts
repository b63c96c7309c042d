import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { currentStack } from '../src/harness';
import { run } from '../src/scenarios/psp-storm';

/** Issue 18, scenario 3, CI-sized: a few dozen checkouts through the storming PSP (`npm run chaos` runs 300). */
describe('PSP storm', () => {
  it('charges nothing twice, cancels no paid order, refuses every forged webhook, ends every saga', async () => {
    const row = await run(currentStack(), { checkouts: 30, perSecond: 10, recoverWithinMs: 120_000 });
    console.log(JSON.stringify(row, null, 2));
    assert.deepEqual(row.violations, []);
    assert.equal(row.stuck, 0, 'every saga ended');
    assert.equal(row.doubleCharges, 0);
    assert.equal(row.lostEvents, 0);
    assert.equal(row.details.forgedAccepted, 0);
    assert.equal(row.details.wronglyCancelled, 0);
    assert.ok(Number(row.details.forgedWebhooks) > 0, 'the storm sent forged or replayed webhooks at all');
    assert.equal(row.orders, 30, 'every checkout was accepted in the end');
    assert.ok(row.ok);
  });
});
