import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payment attempts (one per order: at most one charge), their transition history, the PSP events already
 * applied (webhook dedupe), refunds (the compensation, durable and retried) and orphaned charges.
 */
export class CreatePaymentTables1764720000000 implements MigrationInterface {
  name = 'CreatePaymentTables1764720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payment_attempt (
        id               uuid        PRIMARY KEY,
        tenant_id        text        NOT NULL,
        order_id         uuid        NOT NULL,
        state            text        NOT NULL DEFAULT 'created'
                         CHECK (state IN ('created', 'pending', 'unknown', 'succeeded', 'failed', 'refunded')),
        amount           bigint      NOT NULL CHECK (amount >= 0),
        currency         text        NOT NULL,
        payment_token    text        NOT NULL,
        psp_account      text        NOT NULL,
        -- the key every charge request of this attempt carries: the PSP charges at most once per key
        idempotency_key  text        NOT NULL,
        psp_ref          text        NULL,
        failure_reason   text        NULL,
        -- set when the order was cancelled with refundIfCharged: money that arrives later is refunded
        refund_on_success text       NULL,
        charge_requests  integer     NOT NULL DEFAULT 0,
        last_error       text        NULL,
        -- the event that started this payment: causation, correlation and trace of what it publishes
        cause            jsonb       NOT NULL,
        state_changed_at timestamptz NOT NULL DEFAULT now(),
        reconciled_at    timestamptz NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        UNIQUE (tenant_id, order_id),
        UNIQUE (tenant_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX payment_attempt_open_idx ON payment_attempt (state, state_changed_at)
                   WHERE state IN ('created', 'pending', 'unknown')`);
    await q.query(`CREATE INDEX payment_attempt_psp_ref_idx ON payment_attempt (tenant_id, psp_ref)`);
    await q.query(`
      CREATE TABLE payment_transition (
        id           bigserial   PRIMARY KEY,
        payment_id   uuid        NOT NULL REFERENCES payment_attempt (id),
        tenant_id    text        NOT NULL,
        from_state   text        NOT NULL,
        to_state     text        NOT NULL,
        source       text        NOT NULL,
        psp_event_id text        NULL,
        detail       text        NULL,
        created_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX payment_transition_payment_idx ON payment_transition (payment_id, id)`);
    await q.query(`
      CREATE TABLE psp_event (
        event_id    text        PRIMARY KEY,
        tenant_id   text        NOT NULL,
        type        text        NOT NULL,
        charge_id   text        NOT NULL,
        payment_id  uuid        NULL,
        outcome     text        NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX psp_event_payment_idx ON psp_event (payment_id)`);
    await q.query(`
      CREATE TABLE refund (
        id              uuid        PRIMARY KEY,
        tenant_id       text        NOT NULL,
        order_id        text        NOT NULL,
        -- null for an orphaned charge (a charge at the PSP without a payment of ours)
        payment_id      uuid        NULL UNIQUE REFERENCES payment_attempt (id),
        psp_account     text        NOT NULL,
        psp_charge_id   text        NOT NULL UNIQUE,
        amount          bigint      NOT NULL CHECK (amount > 0),
        currency        text        NOT NULL,
        reason          text        NOT NULL,
        state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'refund_failed')),
        idempotency_key text        NOT NULL,
        attempts        integer     NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error      text        NULL,
        psp_refund_id   text        NULL,
        cause           jsonb       NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX refund_due_idx ON refund (next_attempt_at) WHERE state = 'pending'`);
    await q.query(`
      CREATE TABLE orphan_charge (
        psp_charge_id text        PRIMARY KEY,
        tenant_id     text        NOT NULL,
        reference     text        NOT NULL,
        amount        bigint      NOT NULL,
        currency      text        NOT NULL,
        action        text        NOT NULL CHECK (action IN ('refund', 'flag')),
        detected_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE order_cancellation (
        tenant_id     text        NOT NULL,
        order_id      uuid        NOT NULL,
        reason        text        NOT NULL,
        cancelled_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, order_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE order_cancellation`);
    await q.query(`DROP TABLE orphan_charge`);
    await q.query(`DROP TABLE refund`);
    await q.query(`DROP TABLE psp_event`);
    await q.query(`DROP TABLE payment_transition`);
    await q.query(`DROP TABLE payment_attempt`);
  }
}
