// `npm run lab`: both seed experiments on real databases, printed beside the seeds' figures.
import { loadStackConfig } from '@checkout/local-stack';
import { MariaLab, MariaRun, MariaRunSpec, MariaServerInfo, defaultServer } from './mariadb-lab';
import { LabOptions, USAGE, parseOptions } from './options';
import { PgLabResult, runPostgresLab } from './postgres-lab';
import { ComparedRow, mariaNotes, mariaRows, postgresNotes, postgresRows } from './report';

/** The whole lab's result, as `--json` prints it. */
export interface LabReport {
  postgres?: { result: PgLabResult; rows: ComparedRow[]; notes: string[] };
  mariadb?: { server: MariaServerInfo; runs: MariaRun[]; rows: ComparedRow[]; notes: string[] };
}

/** The MariaDB runs the options ask for: each variant at each jitter, the wait-cost pair, the snapshot-isolation extra. */
export function mariaPlan(options: LabOptions, info: MariaServerInfo): MariaRunSpec[] {
  const plan: MariaRunSpec[] = [];
  for (const variant of options.variants) {
    for (const jitterMs of options.jitter)
      plan.push({ variant, rounds: options.rounds, delayMs: options.delay, jitterMs });
  }
  if (options.waitRounds > 0) {
    for (const variant of ['cond', 'update'] as const) {
      if (options.variants.includes(variant)) {
        plan.push({ variant, rounds: options.waitRounds, delayMs: options.waitDelay, jitterMs: 0 });
      }
    }
  }
  if (options.snapshotIsolation && info.snapshotIsolation !== null && options.variants.includes('naive')) {
    for (const jitterMs of options.jitter) {
      plan.push({
        variant: 'naive',
        rounds: options.rounds,
        delayMs: options.delay,
        jitterMs,
        snapshotIsolation: true,
      });
    }
  }
  return plan;
}

const log = (line: string) => console.error(`[lab] ${line}`);

async function runMaria(options: LabOptions): Promise<NonNullable<LabReport['mariadb']>> {
  const lab = await MariaLab.open(defaultServer(options.mariadbDatabase));
  try {
    const server = await lab.serverInfo();
    const runs: MariaRun[] = [];
    for (const spec of mariaPlan(options, server)) {
      log(
        `MariaDB ${spec.variant}${spec.snapshotIsolation ? '+snapshot_isolation' : ''} jitter=${spec.jitterMs}ms delay=${spec.delayMs}ms`,
      );
      runs.push(await lab.run(spec));
    }
    return { server, runs, rows: mariaRows(runs), notes: mariaNotes(runs, server) };
  } finally {
    await lab.close();
  }
}

function printRows(rows: readonly ComparedRow[], width: number, seedName: string): void {
  for (const row of rows) {
    const label = row.label.startsWith('payment step') ? '' : `${row.label.padEnd(width)}: `;
    console.log(`${label}${row.ours}`);
    const seedLabel = label ? `  ${seedName}`.padEnd(width) : `  ${seedName}`;
    console.log(`${seedLabel}: ${row.seed}   [${row.verdict}]`);
  }
}

function printText(report: LabReport): void {
  if (report.postgres) {
    const { result, rows, notes } = report.postgres;
    const p = result.params;
    console.log(
      `\n== seed 002: PostgreSQL ${result.server}, pool ${p.pool}, ${p.buyers} buyers, ${p.stock} units, ${p.workMs} ms app work ==`,
    );
    console.log("(each line: ours, then the seed's figure and how they compare)\n");
    printRows(
      rows.filter((row) => !row.label.startsWith('payment step')),
      22,
      'seed 002',
    );
    console.log('\npayment state machine:');
    printRows(
      rows.filter((row) => row.label.startsWith('payment step')),
      22,
      'seed 002',
    );
    console.log('\nnotes:');
    for (const note of notes) console.log(`- ${note}`);
  }
  if (report.mariadb) {
    const { server, rows, notes } = report.mariadb;
    console.log(
      `\n== seed 003: MariaDB ${server.version} (${server.isolation}, innodb_lock_wait_timeout=${server.lockWaitTimeout}) ` +
        "vs the seed's MySQL 8.4.8 (REPEATABLE-READ, 50) ==\n",
    );
    for (const row of rows) {
      console.log(row.ours);
      console.log(`  MySQL 8.4.8 (seed): ${row.seed}   [${row.verdict}]`);
    }
    console.log('\nwhere MariaDB differs from MySQL, and why:');
    for (const note of notes) console.log(`- ${note}`);
  }
}

/** Runs the experiments the options select and prints the report. */
export async function main(argv: readonly string[]): Promise<void> {
  const options = parseOptions(argv);
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const report: LabReport = {};
  if (options.db !== 'mariadb') {
    log(`PostgreSQL: ${options.buyers} buyers, ${options.stock} units, pool ${options.pool}`);
    const result = await runPostgresLab(
      loadStackConfig(),
      {
        buyers: options.buyers,
        stock: options.stock,
        pool: options.pool,
        workMs: options.work,
        expire: options.expire,
        database: options.pgDatabase,
      },
      log,
    );
    const rows = postgresRows(result);
    report.postgres = { result, rows, notes: postgresNotes(result, rows) };
  }
  if (options.db !== 'pg') report.mariadb = await runMaria(options);
  if (options.json) console.log(JSON.stringify(report, null, 2));
  else printText(report);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
