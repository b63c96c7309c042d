// The lab's command line: every parameter of both experiments, with the seeds' values as defaults.
import { parseArgs } from 'node:util';
import { z } from 'zod';

/** The MariaDB purchase variants of seed 003. */
export const VARIANTS = ['naive', 'cond', 'update', 'forshare', 'check'] as const;

/** One MariaDB purchase variant. */
export type Variant = (typeof VARIANTS)[number];

const count = (min: number) => z.coerce.number().int().min(min);
const millis = z.coerce.number().min(0).max(10_000);
const items = z.string().transform((raw) =>
  raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean),
);
const identifier = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _ only');

const schema = z.object({
  db: z.enum(['pg', 'mariadb', 'both']).default('both'),
  json: z.boolean().default(false),
  help: z.boolean().default(false),
  buyers: count(1).default(540),
  stock: count(1).default(500),
  pool: count(1).max(300).default(50),
  work: millis.default(5),
  expire: count(0).default(30),
  pgDatabase: identifier.default('lab'),
  rounds: count(1).default(300),
  jitter: items
    .pipe(z.array(z.string().transform(Number).pipe(z.number().min(0).max(10_000))).min(1))
    .default([0, 2]),
  delay: millis.default(0),
  variants: items.pipe(z.array(z.enum(VARIANTS)).min(1)).default([...VARIANTS]),
  waitRounds: count(0).default(40),
  waitDelay: millis.default(50),
  snapshotIsolation: z.boolean().default(true),
  mariadbDatabase: identifier.default('checkout_lab'),
});

/** The parsed, validated options. */
export type LabOptions = z.infer<typeof schema>;

/** The usage text printed by `--help`. */
export const USAGE = `npm run lab -- [options]
  --db pg|mariadb|both     which experiment(s) to run (both)
  --json                   machine-readable output instead of the tables
PostgreSQL 17 (seed 002):
  --buyers N               concurrent buyers (540)
  --stock N                units in stock (500)
  --pool N                 connection pool size (50)
  --work MS                app work between read and write (5)
  --expire N               reservations to expire before the release job (30)
  --pg-database NAME       database created on the stack's server (lab)
MariaDB (seed 003):
  --rounds N               rounds per variant and jitter (300)
  --jitter LIST            session B's random start delay bounds in ms, comma separated (0,2)
  --delay MS               app work inside each transaction (0)
  --variants LIST          naive,cond,update,forshare,check
  --wait-rounds N          rounds of the wait-cost run, 0 to skip (40)
  --wait-delay MS          sleep inside the transaction in the wait-cost run (50)
  --no-snapshot-isolation  skip the extra naive run with innodb_snapshot_isolation=ON
  --mariadb-database NAME  database of our own on 127.0.0.1:3306 (checkout_lab)`;

const flags = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  buyers: { type: 'string' },
  stock: { type: 'string' },
  pool: { type: 'string' },
  work: { type: 'string' },
  expire: { type: 'string' },
  'pg-database': { type: 'string' },
  rounds: { type: 'string' },
  jitter: { type: 'string' },
  delay: { type: 'string' },
  variants: { type: 'string' },
  'wait-rounds': { type: 'string' },
  'wait-delay': { type: 'string' },
  'no-snapshot-isolation': { type: 'boolean' },
  'mariadb-database': { type: 'string' },
} as const;

const kebab = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** Parses argv (without node and the script); throws a readable error on an unknown flag or a bad value. */
export function parseOptions(argv: readonly string[]): LabOptions {
  const { values } = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: false });
  const raw: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(values)) {
    if (flag === 'no-snapshot-isolation') raw.snapshotIsolation = !value;
    else raw[camel(flag)] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `--${kebab(String(issue.path[0]))}: ${issue.message}`,
    );
    throw new Error(`bad options: ${problems.join('; ')}`);
  }
  return parsed.data;
}
