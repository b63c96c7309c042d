import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { loadStackConfig, orderCreatedPayload, scratchDatabase } from '@checkout/testing';
import { percentile, report } from '../report';

/**
 * Hot-row reservation throughput on one SKU: our ReserveStock path, the bare conditional UPDATE, the seed's
 * buggy read-check-write, SELECT ... FOR UPDATE, a batched variant (one statement for many orders), and raw
 * pgbench running the single-row conditional UPDATE on the same PostgreSQL as the physical reference.
 * Usage: node bench/dist/inventory/hot-row.js [seconds per variant, default 8] [clients, default 50]
 */

const REPO = resolve(__dirname, '..', '..', '..');
// apps/inventory is not a reference of the bench project: its compiled commands are loaded at run time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const inventory = require(join(REPO, 'apps/inventory/dist/src/reservation/commands')) as {
  ReserveStock: new (
    outbox: OutboxWriter,
    o: { ttlSeconds: number },
  ) => {
    execute(
      tx: EntityManager,
      input: { tenantId: string; order: ReturnType<typeof orderCreatedPayload> },
    ): Promise<{ outcome: string }>;
  };
  SetStock: new () => {
    execute(tx: EntityManager, input: { tenantId: string; sku: string; available: number }): Promise<unknown>;
  };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MIGRATIONS } = require(join(REPO, 'apps/inventory/dist/src/migrations')) as {
  MIGRATIONS: (new () => object)[];
};

const SECONDS = Number(process.argv[2] ?? 8);
const CLIENTS = Number(process.argv[3] ?? 50);
const TENANT = 'bench';
const BIG = 50_000_000;

type Attempt = () => Promise<boolean>;
interface Run {
  ops: number;
  ok: number;
  seconds: number;
  latencies: number[];
}

/** Runs `clients` loops of attempt() for `seconds` (or until `total` attempts were made). */
async function drive(
  attempt: Attempt,
  clients: number,
  { seconds = SECONDS, total = Infinity } = {},
): Promise<Run> {
  const latencies: number[] = [];
  let ok = 0;
  let started = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end && started < total) {
        started += 1;
        const s = performance.now();
        if (await attempt()) ok += 1;
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { ops: latencies.length, ok, seconds: (performance.now() - t0) / 1000, latencies };
}

async function main(): Promise<void> {
  const config = loadStackConfig();
  const scratch = await scratchDatabase('bench_inventory', MIGRATIONS, CLIENTS);
  const ds: DataSource = scratch.dataSource;
  const pool = new Pool({
    host: '127.0.0.1',
    port: config.pg.port,
    user: config.pg.superuser,
    password: config.pg.password,
    database: scratch.name,
    max: CLIENTS,
  });
  const outbox = new OutboxWriter('inventory');
  const reserve = new inventory.ReserveStock(outbox, { ttlSeconds: 600 });
  const setStock = async (sku: string, available: number) =>
    ds.transaction((tx) => new inventory.SetStock().execute(tx, { tenantId: TENANT, sku, available }));
  const stockOf = async (sku: string) =>
    (
      await pool.query('SELECT available, reserved FROM stock WHERE tenant_id = $1 AND sku = $2', [
        TENANT,
        sku,
      ])
    ).rows[0];

  const variants: Record<string, (sku: string) => Attempt> = {
    'ReserveStock (our path: txn, reservation row, outbox, conditional UPDATE)': (sku) => async () =>
      (
        await ds.transaction((tx) =>
          reserve.execute(tx, {
            tenantId: TENANT,
            order: orderCreatedPayload({
              lines: [{ sku, quantity: 1, unitPrice: 1, discount: 0, lineTotal: 1 }],
            }),
          }),
        )
      ).outcome === 'reserved',
    'conditional UPDATE alone (autocommit)': (sku) => async () =>
      (
        await pool.query(
          `UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE tenant_id = $1 AND sku = $2 AND available >= 1`,
          [TENANT, sku],
        )
      ).rowCount === 1,
    'buggy read-check-write (absolute value)': (sku) => async () => {
      const { rows } = await pool.query('SELECT available FROM stock WHERE tenant_id = $1 AND sku = $2', [
        TENANT,
        sku,
      ]);
      if (rows[0].available < 1) return false;
      await pool.query(
        'UPDATE stock SET available = $3, reserved = reserved + 1 WHERE tenant_id = $1 AND sku = $2',
        [TENANT, sku, rows[0].available - 1],
      );
      return true;
    },
    'SELECT ... FOR UPDATE then UPDATE': (sku) => async () => {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const { rows } = await c.query(
          'SELECT available FROM stock WHERE tenant_id = $1 AND sku = $2 FOR UPDATE',
          [TENANT, sku],
        );
        if (rows[0].available < 1) {
          await c.query('ROLLBACK');
          return false;
        }
        await c.query(
          'UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE tenant_id = $1 AND sku = $2',
          [TENANT, sku],
        );
        await c.query('COMMIT');
        return true;
      } finally {
        c.release();
      }
    },
    'batched: one statement for many orders (+ rows, outbox)': (sku) => batcher(pool, sku),
  };

  variants['ReserveStock with 3 clients (the consumer: 3 partitions at once)'] =
    variants[Object.keys(variants)[0]];
  const clientsOf = (name: string) => (name.includes('3 clients') ? 3 : CLIENTS);
  const rows: Record<string, unknown>[] = [];
  // The reference is measured before and after the variants; the ratio uses the mean (a shared machine drifts).
  const pgBefore = pgbench(config, scratch.name, await freshSku(setStock, BIG));
  const pg = { ...pgBefore };
  for (const [name, make] of Object.entries(variants)) {
    const sku = await freshSku(setStock, BIG);
    const run = await drive(make(sku), clientsOf(name));
    // correctness: 540 attempts for 500 units
    const scarce = await freshSku(setStock, 500);
    const sell = await drive(make(scarce), clientsOf(name), { seconds: 600, total: 540 });
    const after = await stockOf(scarce);
    rows.push({
      variant: name,
      'reservations/s': Math.round(run.ok / run.seconds),
      'p50 ms': round(percentile(run.latencies, 50)),
      'p99 ms': round(percentile(run.latencies, 99)),
      'x pgbench': 0,
      'sold of 500 (540 tried)': sell.ok,
      oversold: Math.max(0, sell.ok - 500),
      'stock after': `${after.available}/${after.reserved}`,
    });
    console.log(`${name}: ${Math.round(run.ok / run.seconds)}/s`);
  }
  const pgAfter = pgbench(config, scratch.name, await freshSku(setStock, BIG));
  pg.tps = (pgBefore.tps + pgAfter.tps) / 2;
  for (const row of rows) row['x pgbench'] = round((row['reservations/s'] as number) / pg.tps);
  rows.push({
    variant: `pgbench ${pg.version}: single-row conditional UPDATE (reference, mean of ${Math.round(pgBefore.tps)} and ${Math.round(pgAfter.tps)})`,
    'reservations/s': Math.round(pg.tps),
    'p50 ms': round(pg.p50),
    'p99 ms': round(pg.p99),
    'x pgbench': 1,
    'sold of 500 (540 tried)': 'n/a',
    oversold: 'n/a',
    'stock after': 'n/a',
  });
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  report('inventory-hot-row', rows, {
    seconds: SECONDS,
    clients: CLIENTS,
    pgbench: pg.version,
    loadavg: load,
  });
  await pool.end();
  await scratch.drop();
}

const round = (n: number) => Math.round(n * 100) / 100;

async function freshSku(
  setStock: (sku: string, n: number) => Promise<unknown>,
  available: number,
): Promise<string> {
  const sku = `BENCH-${randomUUID().slice(0, 8)}`;
  await setStock(sku, available);
  return sku;
}

/**
 * Batches concurrent reservations of one hot SKU: while one batch is in its transaction the next requests
 * queue; the next batch takes up to 200 of them with one stock statement, one reservation insert and one
 * outbox insert, so the row lock is taken once per batch instead of once per order.
 */
function batcher(pool: Pool, sku: string): Attempt {
  const queue: { orderId: string; done: (ok: boolean) => void }[] = [];
  let busy = false;
  const flush = async (): Promise<void> => {
    if (busy || queue.length === 0) return;
    busy = true;
    const batch = queue.splice(0, 200);
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const { rows } = await c.query(
        `WITH s AS (SELECT available FROM stock WHERE tenant_id = $1 AND sku = $2 FOR UPDATE),
              g AS (SELECT LEAST(available, $3::int) AS granted FROM s)
         UPDATE stock SET available = available - g.granted, reserved = reserved + g.granted
           FROM g WHERE tenant_id = $1 AND sku = $2 AND available >= g.granted
         RETURNING g.granted`,
        [TENANT, sku, batch.length],
      );
      const granted = rows[0]?.granted ?? 0;
      const ids = batch.slice(0, granted).map((b) => b.orderId);
      if (ids.length > 0) {
        await c.query(
          `INSERT INTO reservation (tenant_id, order_id, sku, qty, expires_at)
           SELECT $1, id, $2, 1, now() + interval '10 minutes' FROM unnest($3::uuid[]) AS id`,
          [TENANT, sku, ids],
        );
        await c.query(
          `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id, sequence, payload)
           SELECT gen_random_uuid(), 'inventory', id::text, 'inventory.reserved', 1, $1, id, id::text, 1,
                  jsonb_build_object('orderId', id, 'lines', jsonb_build_array(jsonb_build_object('sku', $2::text, 'quantity', 1)))
             FROM unnest($3::uuid[]) AS id`,
          [TENANT, sku, ids],
        );
      }
      await c.query('COMMIT');
      batch.forEach((b, i) => b.done(i < granted));
    } catch (error) {
      await c.query('ROLLBACK').catch(() => undefined);
      batch.forEach((b) => b.done(false));
      console.error(error);
    } finally {
      c.release();
      busy = false;
      void flush();
    }
  };
  return () =>
    new Promise<boolean>((done) => {
      queue.push({ orderId: randomUUID(), done });
      void flush();
    });
}

/** Raw pgbench on the same server and the same row shape; per-transaction log for p50/p99. */
function pgbench(config: ReturnType<typeof loadStackConfig>, database: string, sku: string) {
  const bin = ['/usr/bin/pgbench', '/usr/lib/postgresql/15/bin/pgbench'].find((p) => {
    try {
      execFileSync(p, ['--version']);
      return true;
    } catch {
      return false;
    }
  });
  if (!bin)
    throw new Error(
      'pgbench not found (apt-get install postgresql-client): the reference cannot be measured',
    );
  const dir = mkdtempSync(join(tmpdir(), 'pgbench-'));
  const script = join(dir, 'reserve.sql');
  writeFileSync(
    script,
    `UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE tenant_id = '${TENANT}' AND sku = '${sku}' AND available >= 1;\n`,
  );
  const version = /\d+\.\d+/.exec(execFileSync(bin, ['--version']).toString())![0];
  const out = execFileSync(
    bin,
    [
      '-n',
      '-h',
      '127.0.0.1',
      '-p',
      String(config.pg.port),
      '-U',
      config.pg.superuser,
      '-c',
      String(CLIENTS),
      '-j',
      '2',
      '-T',
      String(SECONDS),
      '-f',
      script,
      '-l',
      `--log-prefix=${join(dir, 'log')}`,
      database,
    ],
    { env: { ...process.env, PGPASSWORD: config.pg.password }, cwd: dir },
  ).toString();
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
  const latencies = readdirSync(dir)
    .filter((f) => f.startsWith('log'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'))
    .map((line) => Number(line.split(' ')[2]) / 1000);
  rmSync(dir, { recursive: true, force: true });
  return { tps, version, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
