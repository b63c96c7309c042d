import { Client } from 'pg';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { superClient } from '@checkout/local-stack';

/** Per table: its row count and the newest transaction id among its rows (an insert or update moves it). */
export type TableMarks = Record<string, string>;

/**
 * Watches every table of one service database for writes: `marks()` reads each table's row count and the
 * highest `xmin` of its rows in one statement, so two equal readings mean no row was inserted, updated or deleted
 * in between. `ignore` lists tables that background work writes at rest (e.g. Debezium's heartbeat).
 */
export class TableWatch {
  private sql = '';
  /** The last reading and when it was taken (ms since epoch). */
  private last?: { marks: TableMarks; at: number };

  private constructor(
    readonly database: string,
    private readonly client: Client,
  ) {}

  /** Connects to the database and lists its tables (public schema), except `ignore`. */
  static async open(database: string, ignore: readonly string[] = []): Promise<TableWatch> {
    const client = superClient(loadStackConfig(), database);
    await client.connect();
    const watch = new TableWatch(database, client);
    const { rows } = await client.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    );
    const tables = rows.map((r) => r.name).filter((t) => !ignore.includes(t));
    if (tables.length === 0) throw new Error(`database ${database} has no tables to watch`);
    watch.sql = tables
      .map(
        (t) =>
          `SELECT '${t}' AS t, count(*)::text || '/' || coalesce(max(xmin::text::bigint), 0)::text AS m FROM "${t}"`,
      )
      .join(' UNION ALL ');
    return watch;
  }

  /** The current marks of every watched table. */
  async marks(): Promise<TableMarks> {
    const { rows } = await this.client.query<{ t: string; m: string }>(this.sql);
    const marks: TableMarks = Object.fromEntries(rows.map((r) => [r.t, r.m]));
    this.last = { marks, at: Date.now() };
    return marks;
  }

  /**
   * The last reading when it is at most `maxAgeMs` old, else a new one: a case's "before" is the previous case's
   * "after" (one scan of every table per case instead of two). A background write in between shows as a change
   * that the caller confirms at rest, as any other.
   */
  async recent(maxAgeMs: number): Promise<TableMarks> {
    return this.last && Date.now() - this.last.at <= maxAgeMs ? this.last.marks : this.marks();
  }

  /** The tables whose marks differ between two readings, as `table: before -> after`. */
  static changed(before: TableMarks, after: TableMarks): string[] {
    return Object.keys(after)
      .filter((t) => before[t] !== after[t])
      .map((t) => `${t}: ${before[t]} -> ${after[t]}`);
  }

  /**
   * Waits until no watched table changes for `quietMs` (leftovers of earlier specs settled). Half a second: the
   * pollers of the stack write at most once a second each, and a write this misses is confirmed at rest anyway.
   */
  async quiet(quietMs = 500, timeoutMs = 60_000): Promise<TableMarks> {
    let last = await this.marks();
    let since = Date.now();
    return waitFor(
      `${this.database} at rest for ${quietMs} ms`,
      async () => {
        const now = await this.marks();
        if (TableWatch.changed(last, now).length > 0) {
          last = now;
          since = Date.now();
          return undefined;
        }
        return Date.now() - since >= quietMs ? now : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
