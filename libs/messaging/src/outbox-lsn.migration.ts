import { MigrationInterface, QueryRunner } from 'typeorm';
import { CreateMessagingTables1764680000000 } from './messaging.migration';

/**
 * Each outbox row remembers the WAL insert position of its write. The relay (Debezium) confirms a position on
 * the replication slot once it has published everything before it, so `written_lsn >= confirmed_flush_lsn`
 * means "not yet confirmed as published": that is what the outbox-age metric and the retention job read.
 */
export class AddOutboxWrittenLsn1796170000000 implements MigrationInterface {
  name = 'AddOutboxWrittenLsn1796170000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE outbox ADD COLUMN written_lsn pg_lsn NOT NULL DEFAULT pg_current_wal_insert_lsn()`,
    );
    await q.query(`CREATE INDEX outbox_written_lsn_idx ON outbox (written_lsn)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN written_lsn`);
  }
}

/** The messaging tables' migrations, in order: a service lists these before its own. */
export const MESSAGING_MIGRATIONS = [CreateMessagingTables1764680000000, AddOutboxWrittenLsn1796170000000];
