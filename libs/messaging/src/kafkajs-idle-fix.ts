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
 */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
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

/** Installs the fixed `scheduleCheckPendingRequests` (idempotent). */
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
  proto[patched] = true;
}

installKafkajsIdleFix();
