import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '@checkout/testing';
import { ChaosContext } from './context';
import { Fault } from './faults';
import { CaseResult, judge } from './verdict';
import { Workload } from './workload';

/** One case of a fault scenario: its name (`--cases` picks by it) and the fault it makes. */
export interface FaultCase {
  name: string;
  fault: (ctx: ChaosContext) => Fault;
  /** Run the checkouts against a flash-sale SKU behind the Redis gate too. */
  flashSale?: boolean;
  /** What the case checks of its own once the part is back (e.g. the gate re-armed): one line per problem. */
  check?: (ctx: ChaosContext, workload: Workload) => Promise<string[]>;
}

/**
 * Runs a workload, hits the stack with the fault once a third of the checkouts are accepted (sagas are then at
 * every step), keeps the part down for `downMs`, brings it back, and judges once the checkouts are answered.
 */
export async function runFaultCase(
  ctx: ChaosContext,
  scenario: string,
  c: FaultCase,
  orders = ctx.options.orders,
): Promise<CaseResult> {
  const workload = new Workload(ctx.events, { orders, rate: ctx.options.rate, flashSale: c.flashSale });
  await workload.prepare();
  const fault = c.fault(ctx);
  ctx.log(`${c.name}: ${orders} checkouts at ${ctx.options.rate}/s, fault: ${fault.name}`);
  const running = workload.run();
  let faultAt: number | null = null;
  let backAt: number | null = null;
  let injected = false;
  try {
    await waitFor(
      'a third of the checkouts accepted',
      async () => workload.tally.accepted >= Math.ceil(orders / 3),
      { timeoutMs: Math.max(60_000, (orders / ctx.options.rate) * 3_000), intervalMs: 100 },
    );
    faultAt = Date.now();
    injected = true;
    await fault.inject();
    // The outage itself: a fault window, not a wait for a condition.
    await delay(ctx.options.downMs);
    await fault.restore();
    injected = false;
    backAt = Date.now();
  } finally {
    if (injected)
      await fault.restore().catch((error: unknown) => ctx.log(`restore failed: ${String(error)}`));
  }
  const own = c.check ? await c.check(ctx, workload) : [];
  await running;
  const judged = await judge(ctx, scenario, c.name, fault.name, workload, { faultAt, backAt });
  const result = { ...judged, ok: judged.ok && own.length === 0, problems: [...judged.problems, ...own] };
  ctx.log(
    `${c.name}: ${result.ok ? 'OK' : 'FAILED'}, ${result.orders} orders, ${result.terminal} terminal, ` +
      `${result.stuck} stuck, ${result.lostEvents} lost, ${result.dlq} on the DLQ, ${result.problems.length} problems`,
  );
  return result;
}
