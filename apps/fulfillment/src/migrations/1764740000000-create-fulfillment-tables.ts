import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Shipments (one per tenant and order), the orders fulfillment has seen (customer and refund marker),
 * and the customer notifications waiting for / recorded by the notifier step.
 */
export class CreateFulfillmentTables1764740000000 implements MigrationInterface {
  name = 'CreateFulfillmentTables1764740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE shipment (
        id               uuid        PRIMARY KEY,
        tenant_id        text        NOT NULL,
        order_id         uuid        NOT NULL,
        customer_id      text        NOT NULL,
        status           text        NOT NULL CHECK (status IN ('created', 'failed', 'cancelled')),
        carrier          text        NOT NULL,
        tracking_number  text        NULL,
        lines            jsonb       NOT NULL,
        failure_reason   text        NULL,
        cancel_reason    text        NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        cancelled_at     timestamptz NULL,
        CONSTRAINT shipment_one_per_order UNIQUE (tenant_id, order_id),
        CONSTRAINT shipment_created_has_tracking CHECK (status = 'failed' OR tracking_number IS NOT NULL),
        CONSTRAINT shipment_failed_has_reason CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX shipment_tenant_status_idx ON shipment (tenant_id, status)`);
    await q.query(`
      CREATE TABLE fulfillment_order (
        tenant_id    text        NOT NULL,
        order_id     uuid        NOT NULL,
        customer_id  text        NULL,
        refunded_at  timestamptz NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, order_id)
      )`);
    await q.query(`
      CREATE TABLE notification (
        id               uuid        PRIMARY KEY,
        tenant_id        text        NOT NULL,
        order_id         uuid        NOT NULL,
        kind             text        NOT NULL
                         CHECK (kind IN ('order_confirmation', 'payment_failed', 'out_of_stock_apology')),
        customer_id      text        NULL,
        subject          text        NOT NULL,
        body             text        NOT NULL,
        voucher_code     text        NULL,
        status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent')),
        cause_event_id   uuid        NOT NULL,
        attempts         integer     NOT NULL DEFAULT 0,
        -- A notifier pass leases the rows it sends, so that replicas never send the same email at once.
        claimed_until    timestamptz NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        sent_at          timestamptz NULL,
        CONSTRAINT notification_one_per_kind UNIQUE (tenant_id, order_id, kind),
        CONSTRAINT notification_voucher_unique UNIQUE (voucher_code),
        CONSTRAINT notification_sent_has_recipient CHECK (status = 'pending' OR customer_id IS NOT NULL)
      )`);
    // The notifier's queue: pending rows whose recipient is known, oldest first.
    await q.query(
      `CREATE INDEX notification_pending_idx ON notification (created_at)
        WHERE status = 'pending' AND customer_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE notification`);
    await q.query(`DROP TABLE fulfillment_order`);
    await q.query(`DROP TABLE shipment`);
  }
}
