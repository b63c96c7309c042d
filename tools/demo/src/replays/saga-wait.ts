import { isTerminalStatus } from '@checkout/contracts';
import { DemoApi, OffContract } from '../http/demo-api';
import { Progress } from '../report/progress';
import { formatCounts, formatMs, tally } from '../report/stats';

/** Whether an order's saga has ended. */
export const sagaEnded = isTerminalStatus;

/** The statuses as last read, and whether every saga ended before the deadline. */
export interface SagaWaitResult {
  statuses: Map<string, string>;
  allEnded: boolean;
  /** When the last saga was seen ended (ms since epoch), or the deadline. */
  endedAt: number;
}

/** Tells how many saga-ending events an order had so far (see SagaHints). */
export interface EndingHints {
  endingEvents(orderId: string): number;
}

/** Options of a wait: how long at most, reads in flight, round length, how often an unhinted order is read. */
export interface SagaWaitOptions {
  deadlineMs: number;
  hints?: EndingHints;
  concurrency?: number;
  roundMs?: number;
  slowReadMs?: number;
}

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Reads the orders of the run through the order read API until every saga ended (a terminal status), showing
 * progress, with a deadline: what has not ended by then is left as last seen, to be reported stuck. Each round
 * reads the orders that had a saga-ending event on Kafka and, staggered, every other order once per
 * `slowReadMs`; an order that ended is not read again.
 */
export async function waitForSagas(
  api: DemoApi,
  orderIds: readonly string[],
  progress: Progress,
  { deadlineMs, hints, concurrency = 8, roundMs = 500, slowReadMs = 10_000 }: SagaWaitOptions,
): Promise<SagaWaitResult> {
  const started = Date.now();
  const deadline = started + deadlineMs;
  // Every accepted checkout answered PENDING; unhinted orders are first read staggered over slowReadMs.
  const statuses = new Map(orderIds.map((id) => [id, 'PENDING']));
  const lastRead = new Map(orderIds.map((id, i) => [id, started - (i / orderIds.length) * slowReadMs]));
  let open = [...orderIds];
  const show = () => {
    const all = [...statuses.values()];
    const ended = tally(all.filter(sagaEnded));
    const moving = tally(all.filter((s) => !sagaEnded(s)));
    progress.update(
      `sagas ended ${orderIds.length - open.length}/${orderIds.length} (${formatCounts(ended)}; ` +
        `in flight: ${formatCounts(moving)}) ${formatMs(Date.now() - started)}`,
    );
  };
  while (open.length > 0 && Date.now() < deadline) {
    const roundStarted = Date.now();
    const due = open.filter(
      (id) => !hints || hints.endingEvents(id) > 0 || roundStarted - (lastRead.get(id) ?? 0) >= slowReadMs,
    );
    await eachLimited(due, concurrency, async (id) => {
      try {
        statuses.set(id, (await api.order(id)).status);
        lastRead.set(id, Date.now());
      } catch (error) {
        // A service being restarted is read again next round; an answer off contract is a real failure.
        if (error instanceof OffContract) throw error;
      }
    });
    open = open.filter((id) => !sagaEnded(statuses.get(id)!));
    show();
    const rest = roundMs - (Date.now() - roundStarted);
    if (open.length > 0 && rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
  }
  progress.done();
  return { statuses, allEnded: open.length === 0, endedAt: Math.min(Date.now(), deadline) };
}
