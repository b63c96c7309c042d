import { MigrationInterface, QueryRunner } from 'typeorm';

/** Name of the publication Debezium streams from (infra/debezium/*.json `publication.name`). */
export const OUTBOX_PUBLICATION = 'outbox_publication';

/**
 * The outbox (events waiting for Debezium), the inbox (event ids a consumer has applied) and the per-saga
 * sequence counter. Every service database includes this migration.
 */
export class CreateMessagingTables1764680000000 implements MigrationInterface {
  name = 'CreateMessagingTables1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox (
        id              uuid PRIMARY KEY,
        aggregate_type  text        NOT NULL,
        aggregate_id    text        NOT NULL,
        type            text        NOT NULL,
        version         integer     NOT NULL,
        tenant_id       text        NOT NULL,
        saga_id         uuid        NOT NULL,
        correlation_id  text        NOT NULL,
        causation_id    uuid        NULL,
        traceparent     text        NULL,
        sequence        integer     NOT NULL,
        payload         jsonb       NOT NULL,
        occurred_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX outbox_occurred_at_idx ON outbox (occurred_at)`);
    // Only inserts are published: the retention job's deletes never reach Kafka.
    await q.query(`CREATE PUBLICATION ${OUTBOX_PUBLICATION} FOR TABLE outbox WITH (publish = 'insert')`);
    await q.query(`
      CREATE TABLE inbox (
        consumer     text        NOT NULL,
        event_id     uuid        NOT NULL,
        type         text        NOT NULL,
        tenant_id    text        NOT NULL,
        saga_id      uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, event_id)
      )`);
    await q.query(`CREATE INDEX inbox_processed_at_idx ON inbox (processed_at)`);
    await q.query(`
      CREATE TABLE saga_sequence (
        saga_id       uuid    PRIMARY KEY,
        last_sequence integer NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP PUBLICATION IF EXISTS ${OUTBOX_PUBLICATION}`);
    await q.query(`DROP TABLE saga_sequence`);
    await q.query(`DROP TABLE inbox`);
    await q.query(`DROP TABLE outbox`);
  }
}
