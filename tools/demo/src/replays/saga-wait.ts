import { OrderAnswer, TERMINAL_STATUSES } from '@checkout/testing';
import { DemoApi, OffContract } from '../http/demo-api';
import { Progress } from '../report/progress';
import { formatCounts, formatMs, tally } from '../report/stats';

/** Whether an order's saga has ended. */
export const sagaEnded = (status: string): boolean =>
  (TERMINAL_STATUSES as readonly string[]).includes(status);

/** The orders as last seen, and whether every saga ended before the deadline. */
export interface SagaWaitResult {
  orders: Map<string, OrderAnswer>;
  allEnded: boolean;
  /** When the last saga was seen ended (ms since epoch), or the deadline. */
  endedAt: number;
}

/** Options of a wait: how long at most, how many reads in flight, how often a round of reads starts. */
export interface SagaWaitOptions {
  deadlineMs: number;
  concurrency?: number;
  roundMs?: number;
}

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Reads every order of the run through the order read API until its saga ended (a terminal status), showing
 * progress, with a deadline: what has not ended by then is returned as it was last seen, to be reported stuck.
 * An order that ended is not read again (the conservation check reads everything once more at the end).
 */
export async function waitForSagas(
  api: DemoApi,
  orderIds: readonly string[],
  progress: Progress,
  { deadlineMs, concurrency = 12, roundMs = 500 }: SagaWaitOptions,
): Promise<SagaWaitResult> {
  const started = Date.now();
  const deadline = started + deadlineMs;
  const orders = new Map<string, OrderAnswer>();
  let open = [...orderIds];
  const show = () => {
    const statuses = [...orders.values()].map((o) => o.status);
    const ended = tally(statuses.filter(sagaEnded));
    const moving = tally(statuses.filter((s) => !sagaEnded(s)));
    const unseen = orderIds.length - orders.size;
    if (unseen > 0) moving['not read yet'] = unseen;
    const endedCount = orderIds.length - open.length;
    progress.update(
      `sagas ended ${endedCount}/${orderIds.length} (${formatCounts(ended)}; in flight: ${formatCounts(moving)}) ` +
        formatMs(Date.now() - started),
    );
  };
  while (open.length > 0 && Date.now() < deadline) {
    const roundStarted = Date.now();
    await eachLimited(open, concurrency, async (id) => {
      try {
        orders.set(id, await api.order(id));
      } catch (error) {
        // A service being restarted is read again next round; an answer off contract is a real failure.
        if (error instanceof OffContract) throw error;
      }
    });
    open = open.filter((id) => !sagaEnded(orders.get(id)?.status ?? 'PENDING'));
    show();
    const rest = roundMs - (Date.now() - roundStarted);
    if (open.length > 0 && rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
  }
  const allEnded = open.length === 0;
  progress.done();
  return { orders, allEnded, endedAt: Math.min(Date.now(), deadline) };
}
