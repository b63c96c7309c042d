import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** p-th percentile (0..100) of a list of numbers, nearest-rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Prints rows as a table and writes them with the run's metadata to bench/results/<name>.json. */
export function report(
  name: string,
  rows: Record<string, unknown>[],
  meta: Record<string, unknown> = {},
): void {
  console.table(rows);
  // `name` may name a sub-folder (`s34/flash`): it is made with the rest.
  const file = join(__dirname, '..', 'results', `${name}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), ...meta, rows }, null, 2));
  console.log(`wrote ${file}`);
}
