import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { FETCH_MAX_WAIT_MS, kafkajsIdleFixInstalled } from './kafkajs-idle-fix';
import './kafka';

// kafkajs' own request queue, as a broker connection drives it (push, fulfil), without a socket.
const RequestQueue = createRequire(__filename)('kafkajs/src/network/requestQueue/index.js');
const Broker = createRequire(__filename)('kafkajs/src/broker/index.js');
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function queue(
  maxInFlightRequests: number | null = null,
  requestTimeout = 30_000,
  enforceRequestTimeout = false,
) {
  const sent: number[] = [];
  const q = new RequestQueue({
    maxInFlightRequests,
    requestTimeout,
    enforceRequestTimeout,
    clientId: 'spec',
    broker: '127.0.0.1:1',
    logger: silent,
  });
  let next = 0;
  const rejected: number[] = [];
  const push = () => {
    const correlationId = next++;
    q.push({
      entry: {
        correlationId,
        apiKey: 1,
        apiName: 'Fetch',
        apiVersion: 11,
        resolve() {},
        reject: () => rejected.push(correlationId),
      },
      expectResponse: true,
      sendRequest: () => sent.push(correlationId),
    });
    return correlationId;
  };
  const fulfil = (correlationId: number) =>
    q.fulfillRequest({ correlationId, payload: Buffer.alloc(0), size: 0 });
  return { q, sent, rejected, push, fulfil };
}

/** Resolves once `check` holds, polling each ms, or fails after `ms`. */
async function until(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('kafkajs idle fix (RequestQueue.scheduleCheckPendingRequests)', () => {
  it('is installed by loading the messaging library', () => {
    assert.equal(kafkajsIdleFixInstalled(), true);
  });

  it('arms no timer once a request is answered and nothing waits (kafkajs 2.2.4 re-arms a 1 ms one forever)', () => {
    const { q, sent, push, fulfil } = queue();
    const id = push();
    assert.deepEqual(sent, [id], 'sent at once');
    fulfil(id);
    assert.equal(q.throttleCheckTimeoutId, null);
    q.checkPendingRequests();
    assert.equal(q.throttleCheckTimeoutId, null, 'a check of an empty queue schedules nothing');
  });

  it('still sends a request held by a broker throttle once the throttle ends, then goes quiet', async () => {
    const { q, sent, push, fulfil } = queue();
    q.maybeThrottle(40);
    const started = Date.now();
    const id = push();
    assert.deepEqual(sent, [], 'held while throttled');
    assert.notEqual(q.throttleCheckTimeoutId, null, 'a check is scheduled for the end of the throttle');
    await until(() => sent.length === 1, 5_000, 'the throttled request to go out');
    assert.ok(Date.now() - started >= 35, 'not before the throttle ends');
    assert.equal(q.throttleCheckTimeoutId, null);
    fulfil(id);
    assert.equal(q.throttleCheckTimeoutId, null);
  });

  it('sends a request held by the in-flight limit when an earlier one is answered', async () => {
    const { q, sent, push, fulfil } = queue(1);
    const first = push();
    const second = push();
    assert.deepEqual(sent, [first]);
    fulfil(first);
    assert.deepEqual(sent, [first, second]);
    fulfil(second);
    // The 10 ms check armed while `second` waited fires once, finds nothing, and arms nothing.
    await until(() => q.throttleCheckTimeoutId === null, 5_000, 'the queue to go quiet');
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(q.throttleCheckTimeoutId, null);
  });
});

describe('kafkajs request-timeout sweep (RequestQueue.scheduleRequestTimeoutCheck)', () => {
  it('sweeps once a second instead of every 100 ms', () => {
    const { q } = queue(null, 30_000, true);
    q.scheduleRequestTimeoutCheck();
    try {
      assert.equal(q.requestTimeoutIntervalId._idleTimeout, 1_000);
    } finally {
      q.destroy();
    }
  });

  it('still fails a request that outlives its timeout', async () => {
    const { q, sent, rejected, push } = queue(null, 50, true);
    q.scheduleRequestTimeoutCheck();
    try {
      const old = push();
      assert.deepEqual(sent, [old]);
      await until(() => rejected.length === 1, 5_000, 'the timed-out request to be failed');
      assert.deepEqual(rejected, [old]);
      assert.equal(q.inflight.size, 0, 'the failed request leaves the in-flight set');
      assert.equal(q.requestTimeoutIntervalId._idleTimeout, 50, 'a timeout under 1 s is its own interval');
    } finally {
      q.destroy();
    }
  });
});

interface SentFetch {
  minBytes: number;
  maxWaitTime: number;
}

/**
 * A consumer's broker as kafkajs builds it, its fetch (patched) running kafkajs' own code down to the connection
 * pool, which records what would go on the wire and answers with the next of `answers` (messages per answer; -1:
 * the request fails).
 */
function fetchingBroker(answers: number[]) {
  const sent: SentFetch[] = [];
  const broker = Object.create(Broker.prototype);
  broker.lookupRequest = () => (request: SentFetch) => request;
  broker.connectionPool = {
    send: async (request: SentFetch) => {
      sent.push({ minBytes: request.minBytes, maxWaitTime: request.maxWaitTime });
      const count = answers.shift() ?? 0;
      if (count < 0) throw new Error('connection reset');
      const messages = Array.from({ length: count }, (_, i) => ({ offset: String(i) }));
      return {
        responses: [
          {
            topicName: 't',
            partitions: [
              { partition: 0, messages: [] },
              { partition: 1, messages },
            ],
          },
        ],
      };
    },
  };
  const fetch = (minBytes: number, maxWaitTime: number) =>
    broker.fetch({
      minBytes,
      maxWaitTime,
      topics: [{ topic: 't', partitions: [{ partition: 0 }, { partition: 1 }] }],
    });
  return { sent, fetch };
}

describe('kafkajs resting gathering fetch (Broker.fetch)', () => {
  const GATHER = 4 * 1024 * 1024;

  it('gathers while messages come and waits for the first message after a fetch that brought none', async () => {
    const { sent, fetch } = fetchingBroker([3, 0, 0, 2, 1, 0]);
    for (let i = 0; i < 6; i++) await fetch(GATHER, 2_000);
    const gather = { minBytes: GATHER, maxWaitTime: 2_000 };
    const rest = { minBytes: 1, maxWaitTime: FETCH_MAX_WAIT_MS };
    assert.deepEqual(sent, [gather, gather, rest, rest, gather, gather]);
  });

  it('leaves a consumer that does not gather as it is', async () => {
    const { sent, fetch } = fetchingBroker([0, 0, 1]);
    for (let i = 0; i < 3; i++) await fetch(1, 500);
    assert.deepEqual(sent, Array(3).fill({ minBytes: 1, maxWaitTime: 500 }));
  });

  it('keeps a gathering wait longer than the resting one when it rests', async () => {
    const { sent, fetch } = fetchingBroker([0, 0]);
    await fetch(GATHER, 8_000);
    await fetch(GATHER, 8_000);
    assert.deepEqual(sent[1], { minBytes: 1, maxWaitTime: 8_000 });
  });

  it('keeps the state per broker of a consumer: one resting does not make another rest', async () => {
    const quiet = fetchingBroker([0, 0]);
    const busy = fetchingBroker([1, 1]);
    await quiet.fetch(GATHER, 2_000);
    await busy.fetch(GATHER, 2_000);
    await quiet.fetch(GATHER, 2_000);
    await busy.fetch(GATHER, 2_000);
    assert.equal(quiet.sent[1].minBytes, 1);
    assert.equal(busy.sent[1].minBytes, GATHER);
  });

  it('keeps resting after a resting fetch failed', async () => {
    const { sent, fetch } = fetchingBroker([0, -1, 1, 0]);
    await fetch(GATHER, 2_000);
    await assert.rejects(fetch(GATHER, 2_000), /connection reset/);
    await fetch(GATHER, 2_000);
    await fetch(GATHER, 2_000);
    assert.deepEqual(
      sent.map((f) => f.minBytes),
      [GATHER, 1, 1, GATHER],
    );
  });
});
