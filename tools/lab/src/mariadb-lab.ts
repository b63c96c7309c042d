// Seed 003 on MariaDB: two sessions released together by a barrier race for the last unit, round after round.
import mysql, { Connection, RowDataPacket } from 'mysql2/promise';
import { performance } from 'node:perf_hooks';
import { Variant } from './options';
import { Outcome, RoundResult, RunStats, tally } from './round-stats';
import { Barrier, pause } from './timing';

/** Where the MariaDB server is: the machine's own, root without a password. */
export interface MariaServer {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** The machine's MariaDB with a database of our own. */
export const defaultServer = (database: string): MariaServer => ({
  host: '127.0.0.1',
  port: 3306,
  user: 'root',
  password: '',
  database,
});

/** One line of the experiment: a variant run for some rounds with the seed's delay and jitter. */
export interface MariaRunSpec {
  variant: Variant;
  rounds: number;
  delayMs: number;
  jitterMs: number;
  /** Runs the two buyers with MariaDB's innodb_snapshot_isolation=ON (MariaDB only, not in the seed). */
  snapshotIsolation?: boolean;
}

/** A run's tally plus its speed and the first message seen for each error code. */
export interface MariaRun extends MariaRunSpec, RunStats {
  msPerRound: number;
  messages: Record<string, string>;
}

/** The server's identity and the settings the seed states for MySQL. */
export interface MariaServerInfo {
  version: string;
  isolation: string;
  lockWaitTimeout: number;
  /** innodb_snapshot_isolation's default on this server, or null when the server has no such variable. */
  snapshotIsolation: string | null;
}

/** The shared-lock clause: MariaDB before 12 only parses the older LOCK IN SHARE MODE spelling of FOR SHARE. */
export const SHARE_LOCK = 'LOCK IN SHARE MODE';

/** An admin session and the two buyers' sessions on our database. */
export class MariaLab {
  private constructor(
    private readonly admin: Connection,
    private readonly a: Connection,
    private readonly b: Connection,
  ) {}

  /** Creates our database if needed and opens the three sessions. */
  static async open(server: MariaServer): Promise<MariaLab> {
    const bootstrap = await mysql.createConnection({ ...server, database: undefined });
    try {
      await bootstrap.query(`CREATE DATABASE IF NOT EXISTS \`${server.database}\``);
    } finally {
      await bootstrap.end();
    }
    const sessions = await Promise.all([0, 1, 2].map(() => mysql.createConnection(server)));
    return new MariaLab(sessions[0], sessions[1], sessions[2]);
  }

  /** The server version and the settings that decide the outcome of the race. */
  async serverInfo(): Promise<MariaServerInfo> {
    const [rows] = await this.admin.query<RowDataPacket[]>(
      'SELECT VERSION() AS version, @@tx_isolation AS isolation, @@innodb_lock_wait_timeout AS lockWait',
    );
    const [snapshot] = await this.admin.query<RowDataPacket[]>(
      "SHOW VARIABLES LIKE 'innodb_snapshot_isolation'",
    );
    return {
      version: String(rows[0].version),
      isolation: String(rows[0].isolation),
      lockWaitTimeout: Number(rows[0].lockWait),
      snapshotIsolation: snapshot.length ? String(snapshot[0].Value) : null,
    };
  }

  /** Recreates the two tables (with the CHECK for the `check` variant) and runs the rounds. */
  async run(spec: MariaRunSpec): Promise<MariaRun> {
    await this.resetTables(spec.variant === 'check');
    const mode = spec.snapshotIsolation ? 'ON' : 'OFF';
    if (spec.snapshotIsolation !== undefined) {
      for (const session of [this.a, this.b])
        await session.query(`SET SESSION innodb_snapshot_isolation = ${mode}`);
    }
    const messages: Record<string, string> = {};
    const rounds: RoundResult[] = [];
    const started = performance.now();
    try {
      for (let round = 0; round < spec.rounds; round += 1) rounds.push(await this.round(spec, messages));
    } finally {
      if (spec.snapshotIsolation !== undefined) {
        for (const session of [this.a, this.b])
          await session.query('SET SESSION innodb_snapshot_isolation = DEFAULT');
      }
    }
    const msPerRound = spec.rounds ? (performance.now() - started) / spec.rounds : 0;
    return { ...spec, ...tally(rounds), msPerRound, messages };
  }

  /** Closes the three sessions. */
  async close(): Promise<void> {
    await Promise.all([this.admin, this.a, this.b].map((session) => session.end()));
  }

  private async resetTables(withCheck: boolean): Promise<void> {
    const check = withCheck ? ', CONSTRAINT stock_not_negative CHECK (stock >= 0)' : '';
    await this.admin.query('DROP TABLE IF EXISTS orders, products');
    await this.admin.query(
      `CREATE TABLE products (id INT PRIMARY KEY, stock INT NOT NULL${check}) ENGINE=InnoDB`,
    );
    await this.admin.query(
      'CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, product_id INT NOT NULL) ENGINE=InnoDB',
    );
    await this.admin.query('INSERT INTO products (id, stock) VALUES (1, 1)');
  }

  private async round(spec: MariaRunSpec, messages: Record<string, string>): Promise<RoundResult> {
    await this.admin.query('UPDATE products SET stock = 1 WHERE id = 1');
    await this.admin.query('DELETE FROM orders');
    const barrier = new Barrier(2);
    const session = async (connection: Connection, startDelayMs: number) => {
      await barrier.wait();
      await pause(startDelayMs);
      return buy(connection, spec.variant, spec.delayMs, messages);
    };
    const outcomes = await Promise.all([session(this.a, 0), session(this.b, Math.random() * spec.jitterMs)]);
    const [stock] = await this.admin.query<RowDataPacket[]>('SELECT stock FROM products WHERE id = 1');
    const [orders] = await this.admin.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM orders');
    return { stock: Number(stock[0].stock), orders: Number(orders[0].n), outcomes };
  }
}

async function stockOf(session: Connection, lock: string): Promise<number> {
  const [rows] = await session.query<RowDataPacket[]>(`SELECT stock FROM products WHERE id = 1${lock}`);
  return Number(rows[0].stock);
}

/** One purchase in one transaction, written as seed 003's script writes each variant. */
export async function buy(
  session: Connection,
  variant: Variant,
  delayMs: number,
  messages: Record<string, string> = {},
): Promise<Outcome> {
  try {
    await session.query('START TRANSACTION');
    let inStock: boolean;
    if (variant === 'cond') {
      await session.query('UPDATE products SET stock = stock - 1 WHERE id = 1 AND stock >= 1');
      const [rows] = await session.query<RowDataPacket[]>('SELECT ROW_COUNT() AS changed');
      inStock = Number(rows[0].changed) === 1;
      await pause(delayMs);
    } else {
      const lock = variant === 'update' ? ' FOR UPDATE' : variant === 'forshare' ? ` ${SHARE_LOCK}` : '';
      inStock = (await stockOf(session, lock)) > 0;
      await pause(delayMs);
      if (inStock) await session.query('UPDATE products SET stock = stock - 1 WHERE id = 1');
    }
    if (!inStock) {
      await session.query('ROLLBACK');
      return 'soldout';
    }
    await session.query('INSERT INTO orders (product_id) VALUES (1)');
    await session.query('COMMIT');
    return 'sold';
  } catch (error) {
    const { errno, message } = error as { errno?: unknown; message?: string };
    if (typeof errno !== 'number') throw error;
    await session.query('ROLLBACK').catch(() => undefined);
    messages[`err${errno}`] ??= message ?? '';
    return `err${errno}`;
  }
}
