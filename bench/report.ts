import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), ...meta, rows }, null, 2));
  console.log(`wrote ${file}`);
}
