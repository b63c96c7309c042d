// Aggregating the two-session rounds into the seed's `variant=... oversold_rounds=...` figures.

/** What one session's purchase ended with: a sale, "sold out", or a database error code. */
export type Outcome = 'sold' | 'soldout' | `err${number}`;

/** What the database held after one round, and what each session got. */
export interface RoundResult {
  stock: number;
  orders: number;
  outcomes: readonly Outcome[];
}

/** The tally of one run of rounds, as seed 003 prints it. */
export interface RunStats {
  rounds: number;
  oversold: number;
  negative: number;
  soldTotal: number;
  errors: Record<string, number>;
}

/** Counts oversold rounds (more orders than the one unit), negative-stock rounds and errors by code. */
export function tally(rounds: readonly RoundResult[], unitsPerRound = 1): RunStats {
  const stats: RunStats = { rounds: rounds.length, oversold: 0, negative: 0, soldTotal: 0, errors: {} };
  for (const round of rounds) {
    stats.soldTotal += round.orders;
    if (round.orders > unitsPerRound) stats.oversold += 1;
    if (round.stock < 0) stats.negative += 1;
    for (const outcome of round.outcomes) {
      if (outcome.startsWith('err')) stats.errors[outcome] = (stats.errors[outcome] ?? 0) + 1;
    }
  }
  return stats;
}

/** An error tally the way the seed's Python prints a dict: `{}` or `{'err1213': 298}`. */
export function pythonDict(errors: Readonly<Record<string, number | string>>): string {
  const entries = Object.entries(errors).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '{}';
  return `{${entries.map(([key, value]) => `'${key}': ${value}`).join(', ')}}`;
}
