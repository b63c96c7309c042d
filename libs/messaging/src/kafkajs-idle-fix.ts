import { createRequire } from 'node:module';
import { assertKnownKafkajs } from './kafkajs-version';

/**
 * kafkajs 2.2.4 (its last release) spins at rest: `RequestQueue.scheduleCheckPendingRequests` re-arms a
 * `setTimeout` of `throttledUntil - now` (negative, so 1 ms) even when no request waits, so every broker connection
 * runs a 1 ms timer loop for as long as it is open (tulios/kafkajs#1556, #1704; the fix, #1667, was never
 * released). Measured at rest: about 3% of a core per service, most of an idle app's CPU.
 *
 * This replaces the method with the fixed one: a timer only while requests are pending, at the end of the
 * broker's throttle (or 10 ms, kafkajs' interval, when the queue is merely full). Nothing else changes: a pushed
 * request that cannot go at once is pending and schedules the check; a fulfilled or timed-out request checks the
 * queue itself. Installed once per process when this library loads; refuses a kafkajs whose method it does not
 * know, so an upgrade is a loud test failure instead of a silent double patch.
 *
 * It also slows the request-timeout sweep: `scheduleRequestTimeoutCheck` runs a `setInterval` of
 * `min(requestTimeout, 100)` ms on every broker connection for as long as it is open, to fail requests older than
 * their timeout (30 s and more; a fetch's is its wait plus 30 s). Ten wakes a second per connection, three to five
 * connections per service, for a deadline counted in tens of seconds. Once a second is enough: a request that
 * hangs is failed at most 1 s after its deadline instead of 0.1 s.
 *
 * And it lets a gathering consumer rest: a consumer whose fetches ask for more than one byte (`minBytes` > 1, the
 * saga tracker's SAGA_FETCH_GATHER_MS) makes the broker hold every fetch for its whole `maxWaitTimeInMs`, also when
 * nothing comes, so an idle one fetches (and decodes an empty answer for every partition it owns) every 2 s. After
 * a fetch that brought no message, the next fetch of that consumer from that broker waits for the first message
 * instead (minBytes 1, FETCH_MAX_WAIT_MS at least), as every other consumer does; once one came it gathers again.
 * Under a steady flow every fetch brings messages and gathers as configured; at rest the consumer fetches every
 * 5 s, and the first event after a quiet spell is answered at once instead of at the end of a gathering wait.
 */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;
const REQUEST_TIMEOUT_CHECK_MS = 1_000;

interface RequestQueueLike {
  pending: unknown[];
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  requestTimeoutIntervalId?: NodeJS.Timeout;
  isConnected(): boolean;
  destroy(): void;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
}

/**
 * How long the broker holds a fetch that finds no message (kafkajs' `maxWaitTimeInMs`, whose default this is). A
 * fetch returns as soon as one message arrives (minBytes 1) and kafkajs only fetches when its workers are idle, so a
 * long wait adds no latency; a short one makes every idle consumer send a fetch (and the broker answer it) over and
 * over: going from 2 s to 5 s took the broker at rest from 2.94% to 2.52% of a core and each consumer service from
 * about 1.1% to 0.75% (bench:saga --idle after a load, bench/results/s36/fetch5-idle). It bounds how long `close()`
 * waits for the fetch in flight and how late a heartbeat notices a rebalance (kafkajs heartbeats between fetches).
 */
export const FETCH_MAX_WAIT_MS = 5_000;

interface FetchArgs {
  minBytes?: number;
  maxWaitTime?: number;
}

interface FetchResult {
  responses: { partitions: { messages: unknown[] }[] }[];
}

interface BrokerLike {
  fetch(args: FetchArgs): Promise<FetchResult>;
}

const patched = Symbol.for('checkout.kafkajs-idle-fix');
/** Set on a consumer's broker connection whose last gathering fetch brought no message. */
const quiet = Symbol('checkout.kafkajs-quiet-gather');

/** Whether the fix is in place (for the spec and the startup log). */
export function kafkajsIdleFixInstalled(): boolean {
  return Boolean((loadRequestQueue().prototype as unknown as Record<symbol, boolean>)[patched]);
}

function loadRequestQueue(): { prototype: RequestQueueLike } {
  const require = createRequire(__filename);
  return require('kafkajs/src/network/requestQueue/index.js');
}

function loadBroker(): { prototype: BrokerLike } {
  const require = createRequire(__filename);
  return require('kafkajs/src/broker/index.js');
}

/** A gathering fetch's arguments as a resting one: answered at the first message, after FETCH_MAX_WAIT_MS at least. */
function restingFetch<A extends FetchArgs>(args: A): A {
  return { ...args, minBytes: 1, maxWaitTime: Math.max(args.maxWaitTime ?? 0, FETCH_MAX_WAIT_MS) };
}

function broughtMessages(result: FetchResult): boolean {
  return result.responses.some((topic) => topic.partitions.some((p) => p.messages.length > 0));
}

/**
 * Installs the fixed `scheduleCheckPendingRequests`, the slower `scheduleRequestTimeoutCheck` and the resting
 * gathering fetch (idempotent).
 */
export function installKafkajsIdleFix(): void {
  assertKnownKafkajs(
    'check whether its idle timer loop is fixed, then update or remove libs/messaging/src/kafkajs-idle-fix.ts',
  );
  const proto = loadRequestQueue().prototype as RequestQueueLike & Record<symbol, boolean>;
  if (proto[patched]) return;
  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const untilUnthrottled = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
  // kafkajs 2.2.4's own, but for the interval.
  proto.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(this: RequestQueueLike) {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    this.requestTimeoutIntervalId = setInterval(
      () => {
        this.inflight.forEach((request) => {
          if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
        });
        if (!this.isConnected()) this.destroy();
      },
      Math.min(this.requestTimeout, REQUEST_TIMEOUT_CHECK_MS),
    );
  };
  // Each consumer has brokers of its own (its own cluster), one per node it fetches from: the state is per fetcher.
  const broker = loadBroker().prototype as BrokerLike & Record<symbol, boolean>;
  const fetch = broker.fetch;
  broker.fetch = async function restingGatherFetch(
    this: BrokerLike & Record<symbol, boolean>,
    args: FetchArgs,
  ) {
    if ((args.minBytes ?? 1) <= 1) return fetch.call(this, args);
    const result = await fetch.call(this, this[quiet] === true ? restingFetch(args) : args);
    this[quiet] = !broughtMessages(result);
    return result;
  };
  proto[patched] = true;
}

installKafkajsIdleFix();
