import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The table Debezium's `heartbeat.action.query` writes (infra/debezium/*.json), in every database with an outbox:
 * several service databases share one PostgreSQL server, and a replication slot only moves when its own database
 * produces WAL, so an idle database would hold the server's WAL back. The table is in the publication so each
 * heartbeat is a change the connector receives (and filters out) and confirms; it keeps one row. The CDC role may
 * write it.
 */
export class DebeziumHeartbeat1796299021000 implements MigrationInterface {
  name = 'DebeziumHeartbeat1796299021000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE debezium_heartbeat (beat_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`ALTER PUBLICATION outbox_publication ADD TABLE debezium_heartbeat`);
    await q.query(`
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'debezium') THEN
          GRANT SELECT, INSERT, DELETE ON debezium_heartbeat TO debezium;
        END IF;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER PUBLICATION outbox_publication DROP TABLE debezium_heartbeat`);
    await q.query(`DROP TABLE debezium_heartbeat`);
  }
}
