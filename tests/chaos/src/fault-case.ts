import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '@checkout/testing';
import { ChaosContext } from './context';
import { Fault } from './faults';
import { CaseResult, judge } from './verdict';
import { Workload } from './workload';

/** What a case finds of its own once the run is judged: one line per problem, and figures for the JSON. */
export interface CaseFindings {
  problems: string[];
  extra?: Record<string, unknown>;
}

/** One case of a fault scenario: its name (`--cases` picks by it) and the fault it makes. */
export interface FaultCase {
  name: string;
  fault: (ctx: ChaosContext) => Fault;
  /** Run the checkouts against a flash-sale SKU behind the Redis gate too. */
  flashSale?: boolean;
  /** When the fault hits: once a third of the checkouts are accepted (the default), or before the first one. */
  injectAt?: 'third' | 'start';
  /**
   * How long the fault lasts once injected; `placed` resolves when every checkout is answered. Default: the
   * `--down-seconds` window.
   */
  hold?: (ctx: ChaosContext, workload: Workload, placed: Promise<void>) => Promise<void>;
  /** What the case checks of its own once the part is back (e.g. the gate re-armed): one line per problem. */
  check?: (ctx: ChaosContext, workload: Workload) => Promise<string[]>;
  /** What the case checks of its own once every saga is judged (e.g. forged webhooks refused). */
  findings?: (ctx: ChaosContext, workload: Workload) => Promise<CaseFindings>;
}

/** The default fault window: the part stays down `--down-seconds` (a length of time, not a wait for a condition). */
const downWindow = (ctx: ChaosContext) => delay(ctx.options.downMs);

/**
 * Runs a workload, hits the stack with the fault once a third of the checkouts are accepted (sagas are then at
 * every step) or before the first one, keeps it for the case's window, brings the part back, and judges once the
 * checkouts are answered.
 */
export async function runFaultCase(
  ctx: ChaosContext,
  scenario: string,
  c: FaultCase,
  orders = ctx.options.orders,
): Promise<CaseResult> {
  const fault = c.fault(ctx);
  try {
    await fault.prepare?.();
    return await faultRun(ctx, scenario, c, fault, orders);
  } finally {
    await fault.dispose?.();
  }
}

async function faultRun(
  ctx: ChaosContext,
  scenario: string,
  c: FaultCase,
  fault: Fault,
  orders: number,
): Promise<CaseResult> {
  const workload = new Workload(ctx.events, { orders, rate: ctx.options.rate, flashSale: c.flashSale });
  await workload.prepare();
  ctx.log(`${c.name}: ${orders} checkouts at ${ctx.options.rate}/s, fault: ${fault.name}`);
  let faultAt: number | null = null;
  let backAt: number | null = null;
  let injected = false;
  let running: Promise<void> | undefined;
  let own: string[] = [];
  try {
    if (c.injectAt === 'start') {
      faultAt = Date.now();
      injected = true;
      await fault.inject();
    }
    running = workload.run();
    if (c.injectAt !== 'start') {
      await waitFor(
        'a third of the checkouts accepted',
        async () => workload.tally.accepted >= Math.ceil(orders / 3),
        { timeoutMs: Math.max(60_000, (orders / ctx.options.rate) * 3_000), intervalMs: 100 },
      );
      faultAt = Date.now();
      injected = true;
      await fault.inject();
    }
    await (c.hold ? c.hold(ctx, workload, running) : downWindow(ctx));
    await fault.restore();
    injected = false;
    backAt = Date.now();
    if (c.check) own = await c.check(ctx, workload);
  } finally {
    if (injected)
      await fault.restore().catch((error: unknown) => ctx.log(`restore failed: ${String(error)}`));
    // The checkouts still under way finish (each gives up at its own deadline) before anything else runs.
    if (running) await running.catch(() => undefined);
  }
  const judged = await judge(ctx, scenario, c.name, fault.name, workload, { faultAt, backAt });
  const found = c.findings ? await c.findings(ctx, workload) : { problems: [] };
  const problems = [...judged.problems, ...own, ...found.problems];
  const result: CaseResult = {
    ...judged,
    ok: judged.ok && own.length === 0 && found.problems.length === 0,
    problems,
    ...(found.extra ? { extra: { ...judged.extra, ...found.extra } } : {}),
  };
  ctx.log(
    `${c.name}: ${result.ok ? 'OK' : 'FAILED'}, ${result.orders} orders, ${result.terminal} terminal, ` +
      `${result.stuck} stuck, ${result.lostEvents} lost, ${result.dlq} on the DLQ, ${result.problems.length} problems`,
  );
  return result;
}
