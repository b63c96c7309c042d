import { replayFlashSale } from './replays/flash-sale.replay';
import { replayPspTimeout } from './replays/psp-timeout.replay';
import { ReplayContext } from './replays/checkout-wave';
import { ReplayReport } from './replays/replay-report';

/** What the demo replays: flash-sale stock and buyers, PSP-timeout checkouts, the per-replay deadline. */
export interface DemoOptions {
  units: number;
  buyers: number;
  timeouts: number;
  deadlineMs: number;
}

/** The three replays, one after the other, each on fresh SKUs. */
export async function runReplays(ctx: ReplayContext, opts: DemoOptions): Promise<ReplayReport[]> {
  const reports: ReplayReport[] = [];
  for (const gate of [false, true]) {
    reports.push(await replayFlashSale(ctx, { units: opts.units, buyers: opts.buyers, gate }));
    ctx.log('');
  }
  reports.push(await replayPspTimeout(ctx, opts.timeouts));
  return reports;
}
