import { Expectation, WaveResult } from './checkout-wave';

/** A replay's result: what it measured, what it promised, and the seed's naive figures to set it against. */
export interface ReplayReport {
  title: string;
  result: WaveResult;
  expectations: Expectation[];
  /** One line setting the result against the seed's naive system (or against no gate). */
  contrast: string;
  /** One line on what this system did instead. */
  headline: string;
}

/** Whether the replay kept every promise and the conservation verdict is clean. */
export const replayPassed = (r: ReplayReport): boolean =>
  r.result.verdict.clean && r.expectations.every((e) => e.ok);

/** The expectations every replay shares: sagas ended, order.paid published for each paid order. */
export function commonExpectations(r: WaveResult): Expectation[] {
  return [
    { ok: r.allEnded, text: `every saga ended within the deadline (stuck ${r.verdict.stuck.length})` },
    {
      ok: r.paidMissing === 0,
      text: `order.paid on Kafka for every paid order (${r.paidLatencyMs.length} seen, ${r.paidMissing} missing)`,
    },
  ];
}
