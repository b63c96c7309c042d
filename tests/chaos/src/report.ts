import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@checkout/local-stack';
import { CaseResult } from './verdict';

/** Where `npm run chaos` writes one JSON file per scenario. */
export const RESULTS_DIR = join(REPO_ROOT, 'tests', 'chaos', 'results');

const seconds = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** The scenario's table as the screen shows it: one row per case. */
export function tableRows(results: CaseResult[]): Record<string, string | number>[] {
  return results.map((r) => ({
    case: r.case,
    fault: r.fault,
    verdict: r.ok ? 'OK' : 'FAILED',
    orders: r.orders,
    terminal: r.terminal,
    stuck: r.stuck,
    'double charges': r.doubleCharges,
    'double refunds': r.doubleRefunds,
    'lost events': r.lostEvents,
    dlq: r.dlq,
    'part back after': r.fault === 'none' ? '-' : seconds(r.downMs),
    'time to recover': r.fault === 'none' ? '-' : seconds(r.recoverMs),
  }));
}

/** Prints a scenario's table and its problems, and writes results/<scenario>.json. */
export function report(scenario: string, results: CaseResult[], meta: Record<string, unknown>): string {
  console.log(`\n== ${scenario} ==`);
  console.table(tableRows(results));
  for (const r of results) {
    for (const p of r.problems.slice(0, 10)) console.log(`  ${r.case}: ${p}`);
    if (r.problems.length > 10) console.log(`  ${r.case}: ... ${r.problems.length - 10} more in the JSON`);
    for (const s of r.stuckSagas.slice(0, 5)) console.log(`  ${r.case}: stuck ${s.orderId} at ${s.lastStep}`);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${scenario}.json`);
  writeFileSync(file, JSON.stringify({ scenario, at: new Date().toISOString(), ...meta, results }, null, 2));
  console.log(`wrote ${file}`);
  return file;
}
