import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { SagaEvent, validateEvent } from '@checkout/contracts';
import { InboxTransport, Logger, OutboxWriter } from '@checkout/messaging';
import { loadStackConfig, orderCreatedPayload, scratchDatabase } from '@checkout/testing';
import { percentile, report } from '../report';

/**
 * Hot-row reservation throughput on one SKU, every variant as a ratio to raw pgbench (the single-row
 * conditional UPDATE, same PostgreSQL, same run):
 * - the service path: the batched order.created consumer's apply (inbox rows + ReserveStockHandler + one outbox
 *   event per order, one transaction per chunk), fed like Kafka feeds it: 3 partitions, each worker taking up
 *   to BATCH pending events at a time. Kafka's own fetch latency is not included.
 * - the previous service path: one order per transaction (inbox row + ReserveStock), 3 partitions;
 * - ReserveStock from 50 clients, the bare conditional UPDATE, the seed's buggy read-check-write,
 *   SELECT ... FOR UPDATE, and a hand-written batch (no inbox, no envelope: an upper bound, not the service).
 * Usage: node bench/dist/inventory/hot-row.js [seconds per variant, default 8] [clients, default 50] [batch, default 100]
 */

const REPO = resolve(__dirname, '..', '..', '..');
// apps/inventory is not a reference of the bench project: its compiled code is loaded at run time.
/* eslint-disable @typescript-eslint/no-require-imports */
type OrderPayload = ReturnType<typeof orderCreatedPayload>;
interface ReserveInput {
  tenantId: string;
  order: OrderPayload;
  cause?: SagaEvent;
}
const commands = require(join(REPO, 'apps/inventory/dist/src/reservation/commands')) as {
  ReserveStockHandler: new (
    outbox: OutboxWriter,
    o: { INVENTORY_RESERVATION_TTL_SECONDS: number },
  ) => { execute(tx: EntityManager, inputs: ReserveInput[]): Promise<{ outcome: string }[]> };
  SetStockHandler: new (outbox: OutboxWriter) => {
    execute(tx: EntityManager, input: { tenantId: string; sku: string; available: number }): Promise<unknown>;
  };
};
const { ReservationConsumer } = require(
  join(REPO, 'apps/inventory/dist/src/reservation/consumers/reservation.consumer'),
) as {
  ReservationConsumer: new (reserve: object, release: object, commit: object, returnSold: object) => object;
};
const { MIGRATIONS } = require(join(REPO, 'apps/inventory/dist/src/migrations')) as {
  MIGRATIONS: (new () => object)[];
};
/* eslint-enable @typescript-eslint/no-require-imports */

const SECONDS = Number(process.argv[2] ?? 8);
const CLIENTS = Number(process.argv[3] ?? 50);
const BATCH = Number(process.argv[4] ?? 100);
const PARTITIONS = 3;
const TENANT = 'bench';
const BIG = 50_000_000;
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: (o, m) => console.error(m, o) };

type Attempt = () => Promise<boolean>;
interface Run {
  ops: number;
  ok: number;
  seconds: number;
  latencies: number[];
  cpuMs: number;
}

/** Runs `clients` closed loops of attempt() for `seconds` (or until `total` attempts were made). */
async function drive(
  attempt: Attempt,
  clients: number,
  { seconds = SECONDS, total = Infinity } = {},
): Promise<Run> {
  const latencies: number[] = [];
  let ok = 0;
  let started = 0;
  const cpu0 = process.cpuUsage();
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
  const cpu = process.cpuUsage(cpu0);
  return {
    ops: latencies.length,
    ok,
    seconds: (performance.now() - t0) / 1000,
    latencies,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

const orderFor = (sku: string): OrderPayload =>
  orderCreatedPayload({ lines: [{ sku, quantity: 1, unitPrice: 1, discount: 0, lineTotal: 1 }] });

const eventFor = (order: OrderPayload): SagaEvent<'order.created'> =>
  validateEvent({
    eventId: randomUUID(),
    type: 'order.created',
    version: 1,
    occurredAt: new Date().toISOString(),
    tenantId: TENANT,
    sagaId: order.orderId,
    correlationId: order.orderId,
    causationId: null,
    traceparent: null,
    sequence: 1,
    payload: order,
  }) as SagaEvent<'order.created'>;

/** Kafka's partitioner in spirit: the order id decides the partition, so one order's events stay in order. */
const partitionOf = (orderId: string) => createHash('md5').update(orderId).digest()[0] % PARTITIONS;

/**
 * Feeds events to per-partition workers the way the consumer gets them: each worker applies everything
 * pending on its partition (up to `batch`) in one call and settles those events when it returns.
 */
function partitionedFeed(
  apply: (events: SagaEvent<'order.created'>[]) => Promise<unknown>,
  batch: number,
): { attempt: (sku: string) => Attempt } {
  const pending: { event: SagaEvent<'order.created'>; done: (ok: boolean) => void }[][] = Array.from(
    { length: PARTITIONS },
    () => [],
  );
  const busy = new Array<boolean>(PARTITIONS).fill(false);
  const pump = async (p: number): Promise<void> => {
    if (busy[p] || pending[p].length === 0) return;
    busy[p] = true;
    const chunk = pending[p].splice(0, batch);
    try {
      await apply(chunk.map((c) => c.event));
      chunk.forEach((c) => c.done(true));
    } catch (error) {
      console.error(error);
      chunk.forEach((c) => c.done(false));
    } finally {
      busy[p] = false;
      void pump(p);
    }
  };
  return {
    attempt: (sku) => () =>
      new Promise<boolean>((done) => {
        const event = eventFor(orderFor(sku));
        const p = partitionOf(event.payload.orderId);
        pending[p].push({ event, done });
        void pump(p);
      }),
  };
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
  // Dropping the scratch database at the end terminates what is still connected: not a bench failure.
  pool.on('error', (error) => {
    if (!/administrator command/.test(error.message)) throw error;
  });
  const outbox = new OutboxWriter('inventory');
  const batch = new commands.ReserveStockHandler(outbox, { INVENTORY_RESERVATION_TTL_SECONDS: 600 });
  // ReserveStock of one order: a batch of one.
  const reserve = {
    execute: async (tx: EntityManager, input: ReserveInput) => (await batch.execute(tx, [input]))[0],
  };
  const tenants = { get: (id: string) => (id === TENANT ? { id } : undefined) };
  // The service's consumer transport, as the inventory app configures it; never connected: apply() is its
  // database path (admission, inbox rows, ReservationConsumer.orderCreated, one transaction per chunk).
  const transport = new InboxTransport({
    name: 'inventory',
    brokers: ['127.0.0.1:1'],
    dataSource: ds,
    logger: quiet,
    admission: { tenants, codePrefix: 'INVENTORY' },
    batchSize: BATCH,
  }).addConsumer(
    new ReservationConsumer(
      new commands.ReserveStockHandler(outbox, { INVENTORY_RESERVATION_TTL_SECONDS: 600 }),
      {},
      {},
      {},
    ),
  );
  const consumer = { apply: (events: SagaEvent[]) => transport.apply('order.created', events) };
  // The previous service path: the per-event runtime's inbox transaction around ReserveStock, one event per transaction.
  const perEvent = async (events: SagaEvent<'order.created'>[]) => {
    for (const event of events) {
      await ds.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO inbox (consumer, event_id, type, tenant_id, saga_id) VALUES ('inventory-single', $1, $2, $3, $4)
           ON CONFLICT DO NOTHING RETURNING 1`,
          [event.eventId, event.type, event.tenantId, event.sagaId],
        );
        await reserve.execute(tx, { tenantId: TENANT, order: event.payload, cause: event });
      });
    }
  };
  const setStock = async (sku: string, available: number) =>
    ds.transaction((tx) =>
      new commands.SetStockHandler(outbox).execute(tx, { tenantId: TENANT, sku, available }),
    );
  const stockOf = async (sku: string) =>
    (
      await pool.query('SELECT available, reserved FROM stock WHERE tenant_id = $1 AND sku = $2', [
        TENANT,
        sku,
      ])
    ).rows[0];
  const heldOf = async (sku: string) =>
    Number(
      (
        await pool.query(
          `SELECT count(*) AS n FROM reservation WHERE tenant_id = $1 AND sku = $2 AND status = 'held'`,
          [TENANT, sku],
        )
      ).rows[0].n,
    );

  interface Variant {
    name: string;
    clients: number;
    /** A fresh attempt factory per SKU (feeds keep per-run queues). */
    make: () => (sku: string) => Attempt;
    /** Whether an attempt's `true` means a reservation (feeds only say "applied"). */
    countFromDb?: boolean;
  }
  const variants: Variant[] = [
    {
      name: `service path: batched order.created consumer (inbox + ReserveStockHandler + outbox), ${PARTITIONS} partitions, batch <= ${BATCH}, ${CLIENTS} in flight`,
      clients: CLIENTS,
      make: () => partitionedFeed((e) => consumer.apply(e), BATCH).attempt,
      countFromDb: true,
    },
    {
      name: `service path, backlog: same, ${CLIENTS * 10} in flight (a flash sale's queue)`,
      clients: CLIENTS * 10,
      make: () => partitionedFeed((e) => consumer.apply(e), BATCH).attempt,
      countFromDb: true,
    },
    {
      name: `previous service path: one order per transaction (inbox + ReserveStock), ${PARTITIONS} partitions`,
      clients: CLIENTS,
      make: () => partitionedFeed(perEvent, 1).attempt,
      countFromDb: true,
    },
    {
      name: `ReserveStock, one order per transaction, ${CLIENTS} clients`,
      clients: CLIENTS,
      make: () => (sku) => async () =>
        (await ds.transaction((tx) => reserve.execute(tx, { tenantId: TENANT, order: orderFor(sku) })))
          .outcome === 'reserved',
    },
    {
      name: 'conditional UPDATE alone (autocommit)',
      clients: CLIENTS,
      make: () => (sku) => async () =>
        (
          await pool.query(
            `UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE tenant_id = $1 AND sku = $2 AND available >= 1`,
            [TENANT, sku],
          )
        ).rowCount === 1,
    },
    {
      name: 'buggy read-check-write (absolute value)',
      clients: CLIENTS,
      make: () => (sku) => async () => {
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
    },
    {
      name: 'SELECT ... FOR UPDATE then UPDATE',
      clients: CLIENTS,
      make: () => (sku) => async () => {
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
    },
    {
      name: 'hand-written batch SQL, no inbox or envelope (upper bound, not the service)',
      clients: CLIENTS,
      make: () => (sku) => batcher(pool, sku),
    },
  ];

  const rows: Record<string, unknown>[] = [];
  // The reference is measured before and after the variants; the ratio uses the mean (a shared machine drifts).
  const pgBefore = pgbench(config, scratch.name, await freshSku(setStock, BIG));
  for (const v of variants) {
    const sku = await freshSku(setStock, BIG);
    const run = await drive(v.make()(sku), v.clients);
    const reserved = v.countFromDb ? await heldOf(sku) : run.ok;
    // correctness: 540 attempts for 500 units
    const scarce = await freshSku(setStock, 500);
    const sell = await drive(v.make()(scarce), Math.min(v.clients, 540), { seconds: 600, total: 540 });
    const sold = v.countFromDb ? await heldOf(scarce) : sell.ok;
    const after = await stockOf(scarce);
    rows.push({
      variant: v.name,
      'reservations/s': Math.round(reserved / run.seconds),
      'p50 ms': round(percentile(run.latencies, 50)),
      'p99 ms': round(percentile(run.latencies, 99)),
      'x pgbench': 0,
      'node CPU ms/reservation': round(run.cpuMs / Math.max(1, reserved)),
      'sold of 500 (540 tried)': sold,
      // units handed out beyond the 500 there were: by the callers' count or by the counter, whichever says more
      oversold: Math.max(0, sold - 500, after.reserved - 500),
      'stock after': `${after.available}/${after.reserved}`,
    });
    console.log(`${v.name}: ${Math.round(reserved / run.seconds)}/s`);
  }
  const pgAfter = pgbench(config, scratch.name, await freshSku(setStock, BIG));
  const pg = { ...pgBefore, tps: (pgBefore.tps + pgAfter.tps) / 2 };
  for (const row of rows) row['x pgbench'] = round((row['reservations/s'] as number) / pg.tps);
  rows.push({
    variant: `pgbench ${pg.version}: single-row conditional UPDATE, ${CLIENTS} clients (reference, mean of ${Math.round(pgBefore.tps)} and ${Math.round(pgAfter.tps)})`,
    'reservations/s': Math.round(pg.tps),
    'p50 ms': round(pg.p50),
    'p99 ms': round(pg.p99),
    'x pgbench': 1,
    'node CPU ms/reservation': 'n/a',
    'sold of 500 (540 tried)': 'n/a',
    oversold: 'n/a',
    'stock after': 'n/a',
  });
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  report('inventory-hot-row', rows, {
    seconds: SECONDS,
    clients: CLIENTS,
    batch: BATCH,
    partitions: PARTITIONS,
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
