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

const patched = Symbol.for('checkout.kafkajs-idle-fix');

/** Whether the fix is in place (for the spec and the startup log). */
export function kafkajsIdleFixInstalled(): boolean {
  return Boolean((loadRequestQueue().prototype as unknown as Record<symbol, boolean>)[patched]);
}

function loadRequestQueue(): { prototype: RequestQueueLike } {
  const require = createRequire(__filename);
  return require('kafkajs/src/network/requestQueue/index.js');
}

/** Installs the fixed `scheduleCheckPendingRequests` and the slower `scheduleRequestTimeoutCheck` (idempotent). */
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
  proto[patched] = true;
}

installKafkajsIdleFix();
