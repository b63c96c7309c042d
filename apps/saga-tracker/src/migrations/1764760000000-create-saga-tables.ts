import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tracker's tables: every recorded saga step, one derived state row per saga, and the inbox of the
 * consumer runtime. The tracker publishes nothing, so unlike the other services it has no outbox (and no
 * publication for Debezium): the inbox is the one table of the messaging migration it needs.
 */
export class CreateSagaTables1764760000000 implements MigrationInterface {
  name = 'CreateSagaTables1764760000000';

  async up(q: QueryRunner): Promise<void> {
    // Same shape as libs/messaging's inbox: the consumer transport records (consumer, event_id) with each handler run.
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
      CREATE TABLE saga_step (
        event_id        uuid        PRIMARY KEY,
        tenant_id       text        NOT NULL,
        saga_id         uuid        NOT NULL,
        type            text        NOT NULL,
        version         integer     NOT NULL,
        service         text        NOT NULL CHECK (service IN ('order', 'inventory', 'payment', 'fulfillment')),
        outcome         text        NOT NULL CHECK (outcome IN ('progress', 'compensation', 'failure', 'terminal')),
        occurred_at     timestamptz NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        causation_id    uuid        NULL,
        correlation_id  text        NOT NULL,
        traceparent     text        NULL,
        trace_id        text        NULL,
        sequence        integer     NOT NULL,
        facts           jsonb       NOT NULL DEFAULT '{}'::jsonb
      )`);
    await q.query(`CREATE INDEX saga_step_saga_idx ON saga_step (tenant_id, saga_id)`);
    await q.query(`CREATE INDEX saga_step_trace_idx ON saga_step (trace_id) WHERE trace_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE saga (
        tenant_id             text        NOT NULL,
        saga_id               uuid        NOT NULL,
        status                text        NOT NULL,
        terminal              boolean     NOT NULL,
        started               boolean     NOT NULL,
        started_at            timestamptz NOT NULL,
        terminal_at           timestamptz NULL,
        compensated           boolean     NOT NULL,
        step_count            integer     NOT NULL,
        last_event_id         uuid        NOT NULL,
        last_type             text        NOT NULL,
        last_service          text        NOT NULL,
        last_outcome          text        NOT NULL,
        last_occurred_at      timestamptz NOT NULL,
        waiting_step          text        NULL,
        waiting_service       text        NULL,
        waiting_compensation  boolean     NULL,
        waiting_since         timestamptz NULL,
        stuck                 boolean     NOT NULL DEFAULT false,
        stuck_since           timestamptz NULL,
        stuck_reason          text        NULL CHECK (stuck_reason IN ('step-timeout', 'overall-timeout')),
        duration_observed     boolean     NOT NULL DEFAULT false,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, saga_id),
        CONSTRAINT saga_terminal_has_time CHECK (terminal = (terminal_at IS NOT NULL)),
        CONSTRAINT saga_stuck_has_time CHECK (stuck = (stuck_since IS NOT NULL) AND stuck = (stuck_reason IS NOT NULL)),
        CONSTRAINT saga_ended_is_not_stuck CHECK (NOT (stuck AND terminal)),
        CONSTRAINT saga_waiting_complete CHECK ((waiting_step IS NULL) = (waiting_since IS NULL))
      )`);
    // The sweep's candidates, the stuck list, the recent list and the durations still to observe.
    await q.query(`CREATE INDEX saga_open_idx ON saga (waiting_since) WHERE NOT terminal AND NOT stuck`);
    await q.query(`CREATE INDEX saga_stuck_idx ON saga (tenant_id, stuck_since DESC) WHERE stuck`);
    await q.query(`CREATE INDEX saga_recent_idx ON saga (tenant_id, last_occurred_at DESC)`);
    await q.query(
      `CREATE INDEX saga_unobserved_idx ON saga (terminal_at) WHERE terminal AND NOT duration_observed`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE saga`);
    await q.query(`DROP TABLE saga_step`);
    await q.query(`DROP TABLE inbox`);
  }
}
