import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { HandlerGaveUp, HandlerRetry, HandlerRetryOptions } from './dead-letter';
import { NonRetryableError } from './errors';

const silent = { info: () => {}, warn: () => {}, error: () => {} };
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** A policy with millisecond backoff; the database is healthy unless told otherwise. */
const policy = (o: Partial<HandlerRetryOptions> = {}) =>
  new HandlerRetry({
    maxAttempts: 3,
    backoff: { initialMs: 1, maxMs: 2 },
    running: () => true,
    databaseHealthy: async () => true,
    logger: silent,
    consumer: 'spec',
    ...o,
  });

/** A handler that fails `times` times with `error`, then answers 'done'. */
function failing(times: number, error: () => unknown) {
  let calls = 0;
  const fn = async () => {
    calls += 1;
    if (calls <= times) throw error();
    return 'done';
  };
  return { fn, calls: () => calls };
}

describe('HandlerRetry', () => {
  it('waits out an infrastructure outage of any length, heartbeating before every attempt', async () => {
    const h = failing(40, refused);
    let beats = 0;
    assert.equal(await policy().execute(h.fn, async () => void (beats += 1)), 'done');
    assert.equal(h.calls(), 41);
    assert.equal(beats, 41);
  });

  it('gives up an error of the event after maxAttempts while the database answers', async () => {
    const h = failing(10, () => new Error('boom'));
    await assert.rejects(
      policy().execute(h.fn),
      (e: unknown) => e instanceof HandlerGaveUp && e.attempts === 3,
    );
    assert.equal(h.calls(), 3);
  });

  it('gives up a NonRetryableError at once', async () => {
    const h = failing(10, () => new NonRetryableError('INVENTORY.LINE_TOO_LARGE', 'broken rule'));
    await assert.rejects(
      policy().execute(h.fn),
      (e: unknown) => e instanceof HandlerGaveUp && e.attempts === 1,
    );
  });

  it('does not give up an unclassified error while the database is down: waits for it, then starts over', async () => {
    const h = failing(5, () => new Error('driver not connected'));
    let probes = 0;
    const databaseHealthy = async () => (probes += 1) > 3;
    assert.equal(await policy({ databaseHealthy }).execute(h.fn), 'done');
    assert.equal(h.calls(), 6);
    assert.ok(probes >= 4);
  });

  it('leaves the message uncommitted (rethrows, no give-up) when the group rebalances or the consumer stops', async () => {
    const rebalance = new Error('The group is rebalancing, so a rejoin is needed');
    let first = true;
    const heartbeat = async () => {
      if (first) return void (first = false);
      throw rebalance;
    };
    await assert.rejects(
      policy().execute(failing(10, refused).fn, heartbeat),
      (e: unknown) => e === rebalance,
    );
    let running = true;
    const stopping = failing(10, () => {
      running = false;
      return refused();
    });
    await assert.rejects(
      policy({ running: () => running }).execute(stopping.fn),
      (e: unknown) => !(e instanceof HandlerGaveUp),
    );
    assert.equal(stopping.calls(), 1);
  });
});
