import { DataSource } from 'typeorm';
import { Counter, Gauge, Registry } from 'prom-client';
import { Logger, consoleLogger } from './logger';
import { ScrapeProbe } from './scrape-probe';

/** What the relay has (not) confirmed of this database's outbox. */
export interface OutboxProbe {
  /** The replication slot the relay reads exists in this database. Without it nothing is published. */
  slotPresent: boolean;
  /** Committed outbox rows written at or after the slot's confirmed position. */
  unconfirmed: number;
  /** Age of the oldest of them, 0 when there are none. */
  oldestAgeSeconds: number;
}

/** How long processed rows are kept, and how much one pass may delete. */
export interface RetentionPolicy {
  /** Outbox rows are deleted once the relay confirmed them and they are older than this. */
  outboxMs: number;
  /**
   * Inbox rows (the consumers' dedupe memory) older than this are deleted. Keep it longer than the topics'
   * retention: a consumer group whose offsets expired re-reads a topic from its beginning and must still
   * recognise what it already applied.
   */
  inboxMs: number;
  /** Rows per DELETE statement; a pass repeats until a batch comes back short or maxBatches is reached. */
  batchSize: number;
  maxBatches: number;
}

export interface OutboxMonitorOptions {
  dataSource: DataSource;
  /**
   * Replication slot of this database's outbox connector (infra/debezium/*.json `slot.name`). Absent for a
   * database without an outbox (a consumer-only service such as the saga tracker): no relay gauges, and retention
   * prunes the inbox only.
   */
  slotName?: string;
  registry?: Registry;
  /** The gauges are read from the database when the registry is scraped, at most once per this many ms (5 s). */
  probeMaxAgeMs?: number;
  logger?: Logger;
  retention: RetentionPolicy;
}

// The slot of this database; no row means no relay. A missing slot confirms nothing: every row counts.
const SLOT = `SELECT confirmed_flush_lsn FROM pg_replication_slots
              WHERE slot_name = $1 AND database = current_database()`;

/**
 * Watches the outbox from the database's side when scraped: how many committed events the relay has not confirmed
 * yet and how old the oldest is (the "Debezium is stuck" alert), and prunes what is safely behind it. Deletes never
 * reach Kafka: the publication publishes inserts only.
 */
export class OutboxMonitor {
  private readonly logger: Logger;
  private readonly unconfirmed?: Gauge;
  private readonly oldestAge?: Gauge;
  private readonly slotPresent?: Gauge;
  private readonly pruned?: Counter<'table'>;

  constructor(private readonly options: OutboxMonitorOptions) {
    this.logger = options.logger ?? consoleLogger;
    const registers = options.registry ? [options.registry] : undefined;
    if (registers && options.slotName !== undefined) {
      const scrape = new ScrapeProbe(
        'outbox',
        () => this.probe(),
        options.probeMaxAgeMs ?? 5_000,
        this.logger,
      );
      const collect = () => scrape.refresh();
      this.unconfirmed = new Gauge({
        name: 'outbox_unconfirmed_events',
        help: 'Committed outbox events the relay has not confirmed as published yet',
        registers,
        collect,
      });
      this.oldestAge = new Gauge({
        name: 'outbox_oldest_unconfirmed_age_seconds',
        help: 'Age of the oldest outbox event not yet confirmed by the relay (0 when caught up)',
        registers,
        collect,
      });
      this.slotPresent = new Gauge({
        name: 'outbox_relay_slot_present',
        help: '1 when the replication slot of the outbox connector exists, 0 when nothing relays this outbox',
        registers,
        collect,
      });
    }
    if (registers)
      this.pruned = new Counter({
        name: 'messaging_rows_pruned_total',
        help: 'Outbox rows (confirmed by the relay) and inbox rows deleted by retention',
        labelNames: ['table'],
        registers,
      });
  }

  /** Reads the relay's position and the outbox behind it, and updates the gauges. */
  async probe(): Promise<OutboxProbe> {
    if (this.options.slotName === undefined) throw new Error('this database has no outbox to probe');
    const [row] = await this.options.dataSource.query(
      `WITH slot AS (${SLOT})
       SELECT EXISTS (SELECT 1 FROM slot)                                   AS slot_present,
              count(o.id)::int                                             AS unconfirmed,
              COALESCE(EXTRACT(EPOCH FROM now() - min(o.occurred_at)), 0)::float8 AS oldest_age
         FROM outbox o
        WHERE o.written_lsn >= COALESCE((SELECT confirmed_flush_lsn FROM slot), '0/0'::pg_lsn)`,
      [this.options.slotName],
    );
    const probe: OutboxProbe = {
      slotPresent: row.slot_present === true,
      unconfirmed: Number(row.unconfirmed),
      oldestAgeSeconds: Math.max(0, Number(row.oldest_age)),
    };
    this.slotPresent?.set(probe.slotPresent ? 1 : 0);
    this.unconfirmed?.set(probe.unconfirmed);
    this.oldestAge?.set(probe.oldestAgeSeconds);
    return probe;
  }

  /** Deletes confirmed outbox rows and old inbox rows past their retention; returns how many of each. */
  async prune(): Promise<{ outbox: number; inbox: number }> {
    const { outboxMs, inboxMs } = this.options.retention;
    const outbox =
      this.options.slotName === undefined
        ? 0
        : await this.deleteInBatches(
            'outbox',
            `DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox
          WHERE occurred_at < now() - make_interval(secs => $2 / 1000.0)
            AND written_lsn < (${SLOT})
          ORDER BY occurred_at LIMIT $3)`,
            [this.options.slotName, outboxMs],
          );
    const inbox = await this.deleteInBatches(
      'inbox',
      `DELETE FROM inbox WHERE (consumer, event_id) IN (
         SELECT consumer, event_id FROM inbox
          WHERE processed_at < now() - make_interval(secs => $1 / 1000.0)
          ORDER BY processed_at LIMIT $2)`,
      [inboxMs],
    );
    if (outbox + inbox > 0) this.logger.info({ outbox, inbox }, 'messaging retention pruned rows');
    return { outbox, inbox };
  }

  private async deleteInBatches(table: 'outbox' | 'inbox', sql: string, params: unknown[]): Promise<number> {
    const { batchSize, maxBatches } = this.options.retention;
    let total = 0;
    for (let i = 0; i < maxBatches; i += 1) {
      const runner = this.options.dataSource.createQueryRunner();
      let deleted: number;
      try {
        deleted = (await runner.query(sql, [...params, batchSize], true)).affected ?? 0;
      } finally {
        await runner.release();
      }
      total += deleted;
      this.pruned?.inc({ table }, deleted);
      if (deleted < batchSize) break;
    }
    return total;
  }
}
