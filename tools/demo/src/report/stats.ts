/** The p-th percentile (0..100) of some numbers, nearest rank; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** A duration for people: 840 ms, 1.84 s, 2 min 05 s. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return 'n/a';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1_000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** Counts of a list of labels, as "A 3, B 1" sorted by label; "none" when empty. */
export function formatCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`);
  return parts.length ? parts.join(', ') : 'none';
}

/** Tallies labels. */
export function tally(labels: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
}
