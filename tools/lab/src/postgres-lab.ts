// Seed 002 on PostgreSQL 17: 540 buyers for 500 units, reservations with a TTL, and the payment state machine.
import { Pool, PoolClient } from 'pg';
import { StackConfig, startPostgres, superClient } from '@checkout/local-stack';
import { pause } from './timing';

/** The knobs of the PostgreSQL experiment (seed 002 used 540 buyers, 500 units, pool 50, 5 ms of work). */
export interface PgLabParams {
  buyers: number;
  stock: number;
  pool: number;
  workMs: number;
  expire: number;
  database: string;
}

/** The single inventory row after a run. */
export interface StockLevel {
  available: number;
  reserved: number;
}

/** How the buyers of one strategy fared, and what the row says afterwards. */
export interface SaleRun {
  sold: number;
  refused: number;
  errors: Record<string, number>;
  stock: StockLevel;
}

/** One run of the release job: inventory rows it updated and the stock afterwards. */
export interface ReleaseRun {
  rows: number;
  stock: StockLevel;
}

/** Everything the PostgreSQL experiment measured. */
export interface PgLabResult {
  server: string;
  params: PgLabParams;
  sales: {
    readCheckWrite: SaleRun;
    checkThenDecrement: SaleRun;
    conditional: SaleRun;
    decrementWithCheck: SaleRun;
    readCheckWriteWithCheck: SaleRun;
  };
  reserve: SaleRun;
  release: ReleaseRun[];
  trace: string[];
}

type Queryable = Pool | PoolClient;
type Buy = (db: Pool) => Promise<boolean>;

const SKU = 'SKU-1';

/** The buggy and the safe ways to sell one unit, as seed 002 writes them. */
export const STRATEGIES = {
  readCheckWrite:
    (workMs: number): Buy =>
    async (db) => {
      const { rows } = await db.query<{ available: number }>(
        'SELECT available FROM inventory WHERE sku = $1',
        [SKU],
      );
      if (rows[0].available < 1) return false;
      await pause(workMs);
      await db.query('UPDATE inventory SET available = $1 WHERE sku = $2', [rows[0].available - 1, SKU]);
      return true;
    },
  checkThenDecrement:
    (workMs: number): Buy =>
    async (db) => {
      const { rows } = await db.query<{ available: number }>(
        'SELECT available FROM inventory WHERE sku = $1',
        [SKU],
      );
      if (rows[0].available < 1) return false;
      await pause(workMs);
      await db.query('UPDATE inventory SET available = available - 1 WHERE sku = $1', [SKU]);
      return true;
    },
  conditional: (): Buy => async (db) => {
    const result = await db.query(
      'UPDATE inventory SET available = available - 1 WHERE sku = $1 AND available >= 1',
      [SKU],
    );
    return result.rowCount === 1;
  },
};

/** Moves one unit from available to reserved and records a held reservation with a 10-minute TTL, atomically. */
export async function reserve(db: Pool, orderId: string): Promise<boolean> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const held = await client.query(
      'UPDATE inventory SET available = available - 1, reserved = reserved + 1 WHERE sku = $1 AND available >= 1',
      [SKU],
    );
    if (held.rowCount === 0) {
      await client.query('ROLLBACK');
      return false;
    }
    await client.query(
      "INSERT INTO reservation (order_id, sku, qty, expires_at) VALUES ($1, $2, 1, now() + interval '10 minutes')",
      [orderId, SKU],
    );
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The idempotent release job: only held -> released, and the stock comes back in the same statement. */
export const RELEASE_EXPIRED = `
  WITH expired AS (
    UPDATE reservation SET status = 'released'
    WHERE status = 'held' AND expires_at < now()
    RETURNING sku, qty)
  UPDATE inventory i SET available = available + e.total, reserved = reserved - e.total
  FROM (SELECT sku, sum(qty)::int AS total FROM expired GROUP BY sku) e
  WHERE i.sku = e.sku`;

/** The valid source states of each payment state (the state machine). */
export const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  pending: ['created'],
  unknown: ['pending'],
  succeeded: ['pending', 'unknown'],
  failed: ['pending', 'unknown'],
  refunded: ['succeeded'],
};

/** One conditional UPDATE per transition: applying it twice or out of order changes nothing. */
export async function transition(
  db: Queryable,
  id: string,
  to: string,
  pspRef?: string,
): Promise<'applied' | 'ignored'> {
  const result = await db.query(
    `UPDATE payment_attempt SET state = $2, psp_ref = COALESCE($3, psp_ref), updated_at = now()
     WHERE id = $1 AND state = ANY($4) RETURNING state`,
    [id, to, pspRef ?? null, ALLOWED[to]],
  );
  return result.rowCount ? 'applied' : 'ignored';
}

/** A PSP webhook: dedupe on the event id and apply the transition in one transaction. */
export async function webhook(
  db: Pool,
  eventId: string,
  paymentId: string,
  to: string,
): Promise<'applied' | 'ignored'> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const fresh = await client.query('INSERT INTO psp_event (event_id) VALUES ($1) ON CONFLICT DO NOTHING', [
      eventId,
    ]);
    const outcome = fresh.rowCount ? await transition(client, paymentId, to, `psp_${eventId}`) : 'ignored';
    await client.query('COMMIT');
    return outcome;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Starts the stack's PostgreSQL only if nothing answers, then creates our database if it is missing. */
export async function preparePostgres(
  config: StackConfig,
  database: string,
  log: (line: string) => void,
): Promise<void> {
  await startPostgres(config, log);
  const admin = superClient(config);
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
}

async function resetTables(db: Pool, stock: number, withCheck: boolean): Promise<void> {
  const check = withCheck ? ', CONSTRAINT available_not_negative CHECK (available >= 0)' : '';
  await db.query('DROP TABLE IF EXISTS inventory, reservation, payment_attempt, psp_event');
  await db.query(
    `CREATE TABLE inventory (sku text PRIMARY KEY, available int NOT NULL, reserved int NOT NULL DEFAULT 0${check})`,
  );
  await db.query(`CREATE TABLE reservation (
    order_id text PRIMARY KEY, sku text NOT NULL REFERENCES inventory (sku), qty int NOT NULL,
    expires_at timestamptz NOT NULL, status text NOT NULL DEFAULT 'held')`);
  await db.query(`CREATE TABLE payment_attempt (
    id text PRIMARY KEY, state text NOT NULL, psp_ref text, updated_at timestamptz NOT NULL DEFAULT now())`);
  await db.query(
    'CREATE TABLE psp_event (event_id text PRIMARY KEY, received_at timestamptz NOT NULL DEFAULT now())',
  );
  await db.query('INSERT INTO inventory (sku, available, reserved) VALUES ($1, $2, 0)', [SKU, stock]);
}

async function stockLevel(db: Queryable): Promise<StockLevel> {
  const { rows } = await db.query<StockLevel>('SELECT available, reserved FROM inventory WHERE sku = $1', [
    SKU,
  ]);
  return rows[0];
}

async function sell(db: Pool, buyers: number, buy: (index: number) => Promise<boolean>): Promise<SaleRun> {
  const run: SaleRun = { sold: 0, refused: 0, errors: {}, stock: { available: 0, reserved: 0 } };
  const outcomes = await Promise.allSettled(Array.from({ length: buyers }, (_, index) => buy(index)));
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') {
      if (outcome.value) run.sold += 1;
      else run.refused += 1;
    } else {
      const reason = outcome.reason as { code?: string; message?: string };
      const code = `sqlstate ${reason.code ?? reason.message ?? 'unknown'}`;
      run.errors[code] = (run.errors[code] ?? 0) + 1;
    }
  }
  run.stock = await stockLevel(db);
  return run;
}

async function paymentTrace(db: Pool): Promise<string[]> {
  const id = 'pay-1';
  await db.query("INSERT INTO payment_attempt (id, state) VALUES ($1, 'created')", [id]);
  const state = async () =>
    (await db.query<{ state: string }>('SELECT state FROM payment_attempt WHERE id = $1', [id])).rows[0]
      .state;
  const step = async (to: string) =>
    `${to.padEnd(10)}-> ${await transition(db, id, to)} (state=${await state()})`;
  return [
    await step('pending'),
    await step('unknown'),
    `webhook evt_9 succeeded -> ${await webhook(db, 'evt_9', id, 'succeeded')}`,
    `webhook evt_9 duplicate -> ${await webhook(db, 'evt_9', id, 'succeeded')}`,
    await step('failed'),
    await step('refunded'),
  ];
}

/** Runs the whole PostgreSQL experiment on a fresh set of tables per strategy. */
export async function runPostgresLab(
  config: StackConfig,
  params: PgLabParams,
  log: (line: string) => void,
): Promise<PgLabResult> {
  await preparePostgres(config, params.database, log);
  const db = new Pool({
    host: '127.0.0.1',
    port: config.pg.port,
    user: config.pg.superuser,
    password: config.pg.password,
    database: params.database,
    max: params.pool,
  });
  try {
    const server = (await db.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
    const strategy = async (withCheck: boolean, buy: Buy) => {
      await resetTables(db, params.stock, withCheck);
      return sell(db, params.buyers, () => buy(db));
    };
    const sales = {
      readCheckWrite: await strategy(false, STRATEGIES.readCheckWrite(params.workMs)),
      checkThenDecrement: await strategy(false, STRATEGIES.checkThenDecrement(params.workMs)),
      conditional: await strategy(true, STRATEGIES.conditional()),
      decrementWithCheck: await strategy(true, STRATEGIES.checkThenDecrement(params.workMs)),
      readCheckWriteWithCheck: await strategy(true, STRATEGIES.readCheckWrite(params.workMs)),
    };
    await resetTables(db, params.stock, true);
    const reserved = await sell(db, params.buyers, (index) =>
      reserve(db, `order-${String(index).padStart(5, '0')}`),
    );
    await db.query(
      `UPDATE reservation SET expires_at = now() - interval '1 second'
       WHERE order_id IN (SELECT order_id FROM reservation WHERE status = 'held' ORDER BY order_id LIMIT $1)`,
      [params.expire],
    );
    const release: ReleaseRun[] = [];
    for (let run = 0; run < 2; run += 1) {
      const result = await db.query(RELEASE_EXPIRED);
      release.push({ rows: result.rowCount ?? 0, stock: await stockLevel(db) });
    }
    const trace = await paymentTrace(db);
    return { server, params, sales, reserve: reserved, release, trace };
  } finally {
    await db.end();
  }
}
