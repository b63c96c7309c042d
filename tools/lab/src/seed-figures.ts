// The measured figures the two seed documents publish, verbatim, so every run prints them beside ours.

/** Seed 002's parameters: Postgres 17, pool 50, 540 concurrent buyers, 500 units, 5 ms of app work. */
export const SEED_002_PARAMS = { pool: 50, buyers: 540, stock: 500, workMs: 5, expire: 30 } as const;

/** Seed 002's printed result lines, keyed by the row they belong to. */
export const SEED_002_LINES: Record<string, string> = {
  readCheckWrite:
    'sold 540 of 500, stock now { available: 499, reserved: 0 } (lost updates hide the oversell)',
  checkThenDecrement: 'sold 540 of 500, stock now { available: -40, reserved: 0 }',
  conditional: 'sold 500 of 500, stock now { available: 0, reserved: 0 }',
  decrementWithCheck:
    'not measured; the text claims the last 40 requests fail on the CHECK instead of going negative',
  readCheckWriteWithCheck: 'not measured; the text claims the absolute write still oversells with the CHECK',
  reserve: 'held 500, stock now { available: 0, reserved: 500 }',
  release: 'rows=1, stock now { available: 30, reserved: 470 }',
  releaseAgain: 'not printed; the text says a second run returns nothing twice',
};

/** Seed 002's payment state machine trace, line for line. */
export const SEED_002_TRACE: readonly string[] = [
  'pending   -> applied (state=pending)',
  'unknown   -> applied (state=unknown)',
  'webhook evt_9 succeeded -> applied',
  'webhook evt_9 duplicate -> ignored',
  'failed    -> ignored (state=succeeded)',
  'refunded  -> applied (state=refunded)',
];

/** A count the seed gives either as one figure or as the range it saw over several runs. */
export type SeedCount = number | readonly [number, number];

/** One `variant=...` line of seed 003 (MySQL 8.4.8, REPEATABLE READ, two mysql CLI sessions driven by Python). */
export interface SeedMariaLine {
  variant: string;
  delayMs: number;
  jitterMs: number;
  rounds: number;
  oversold: SeedCount;
  negative: SeedCount;
  errors: Readonly<Record<string, SeedCount>>;
  msPerRound?: number;
  /** Where the figure comes from when the seed prints no line for it. */
  source?: string;
}

/** Seed 003's figures; the naive rows are reconstructed from its prose (its table did not survive). */
export const SEED_003_LINES: readonly SeedMariaLine[] = [
  {
    variant: 'naive',
    delayMs: 0,
    jitterMs: 0,
    rounds: 300,
    oversold: [299, 300],
    negative: [299, 300],
    errors: {},
    source: 'prose: "299 to 300" at 0 ms',
  },
  {
    variant: 'naive',
    delayMs: 0,
    jitterMs: 2,
    rounds: 300,
    oversold: [32, 76],
    negative: [32, 76],
    errors: {},
    source: 'prose: runs gave 32, 50, 64 and 76',
  },
  {
    variant: 'cond',
    delayMs: 0,
    jitterMs: 0,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 1.2,
  },
  {
    variant: 'cond',
    delayMs: 0,
    jitterMs: 2,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 3.8,
  },
  {
    variant: 'update',
    delayMs: 0,
    jitterMs: 0,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 2.2,
  },
  {
    variant: 'update',
    delayMs: 0,
    jitterMs: 2,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 4.5,
  },
  {
    variant: 'forshare',
    delayMs: 0,
    jitterMs: 0,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: { err1213: 298 },
    msPerRound: 1.4,
  },
  {
    variant: 'forshare',
    delayMs: 0,
    jitterMs: 2,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: { err1213: 13 },
    msPerRound: 3.2,
  },
  {
    variant: 'check',
    delayMs: 0,
    jitterMs: 0,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: { err3819: 299 },
    msPerRound: 4.2,
  },
  {
    variant: 'check',
    delayMs: 0,
    jitterMs: 2,
    rounds: 300,
    oversold: 0,
    negative: 0,
    errors: { err3819: 37 },
    msPerRound: 2.8,
  },
  {
    variant: 'cond',
    delayMs: 50,
    jitterMs: 0,
    rounds: 40,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 138.9,
  },
  {
    variant: 'update',
    delayMs: 50,
    jitterMs: 0,
    rounds: 40,
    oversold: 0,
    negative: 0,
    errors: {},
    msPerRound: 123.4,
  },
];
