import { MigrationInterface, QueryRunner } from 'typeorm';

/** Price list, vouchers, flash sales, orders with lines and history, and idempotency keys. */
export class CreateOrderTables1764700000000 implements MigrationInterface {
  name = 'CreateOrderTables1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE prices (
        tenant_id  text        NOT NULL,
        sku        text        NOT NULL,
        unit_price bigint      NOT NULL CHECK (unit_price >= 0),
        currency   char(3)     NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, sku)
      )`);
    await q.query(`
      CREATE TABLE vouchers (
        tenant_id       text        NOT NULL,
        code            text        NOT NULL,
        percent_off     integer     NOT NULL CHECK (percent_off BETWEEN 1 AND 100),
        max_redemptions integer     NOT NULL CHECK (max_redemptions >= 1),
        redeemed        integer     NOT NULL DEFAULT 0,
        created_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, code),
        -- the last line of defence of the conditional update on the counter
        CHECK (redeemed >= 0 AND redeemed <= max_redemptions)
      )`);
    await q.query(`
      CREATE TABLE orders (
        id              uuid        PRIMARY KEY,
        tenant_id       text        NOT NULL,
        customer_id     text        NOT NULL,
        currency        char(3)     NOT NULL,
        subtotal        bigint      NOT NULL CHECK (subtotal >= 0),
        discount        bigint      NOT NULL CHECK (discount >= 0),
        total           bigint      NOT NULL CHECK (total >= 0),
        voucher_code    text        NULL,
        payment_token   text        NOT NULL,
        status          text        NOT NULL CHECK (status IN ('PENDING', 'AWAITING_PAYMENT', 'PAID', 'SHIPPED', 'REJECTED',
                                                               'CANCELLED', 'BACKORDERED', 'REFUNDED')),
        payment_state   text        NULL CHECK (payment_state IN ('created', 'pending', 'unknown', 'succeeded', 'failed', 'refunded')),
        payment_id      uuid        NULL,
        psp_reference   text        NULL,
        paid_at         timestamptz NULL,
        stock_committed boolean     NOT NULL DEFAULT false,
        gate_hold_id    text        NULL,
        idempotency_key text        NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX orders_tenant_created_idx ON orders (tenant_id, created_at)`);
    await q.query(
      `CREATE INDEX orders_open_idx ON orders (status, updated_at) WHERE status IN ('PENDING', 'AWAITING_PAYMENT', 'PAID')`,
    );
    await q.query(`
      CREATE TABLE order_lines (
        order_id   uuid    NOT NULL REFERENCES orders (id),
        line_no    integer NOT NULL,
        tenant_id  text    NOT NULL,
        sku        text    NOT NULL,
        quantity   integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
        unit_price bigint  NOT NULL CHECK (unit_price >= 0),
        discount   bigint  NOT NULL CHECK (discount >= 0),
        line_total bigint  NOT NULL CHECK (line_total >= 0),
        PRIMARY KEY (order_id, line_no),
        UNIQUE (order_id, sku)
      )`);
    await q.query(`
      CREATE TABLE order_history (
        id          bigserial   PRIMARY KEY,
        order_id    uuid        NOT NULL REFERENCES orders (id),
        tenant_id   text        NOT NULL,
        from_status text        NULL,
        to_status   text        NOT NULL,
        cause       text        NOT NULL,
        event_id    uuid        NULL,
        at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX order_history_order_idx ON order_history (order_id, id)`);
    await q.query(`
      CREATE TABLE voucher_redemptions (
        order_id    uuid        PRIMARY KEY REFERENCES orders (id),
        tenant_id   text        NOT NULL,
        code        text        NOT NULL,
        redeemed_at timestamptz NOT NULL DEFAULT now(),
        returned_at timestamptz NULL,
        FOREIGN KEY (tenant_id, code) REFERENCES vouchers (tenant_id, code)
      )`);
    await q.query(`
      CREATE TABLE flash_sales (
        tenant_id        text        NOT NULL,
        sku              text        NOT NULL,
        enabled          boolean     NOT NULL,
        source           text        NOT NULL CHECK (source IN ('inventory', 'override')),
        primed_available integer     NULL,
        updated_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, sku)
      )`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        tenant_id        text        NOT NULL,
        key              text        NOT NULL,
        request_hash     text        NOT NULL,
        state            text        NOT NULL CHECK (state IN ('processing', 'completed')),
        lease_token      uuid        NULL,
        lease_expires_at timestamptz NULL,
        order_id         uuid        NULL,
        response_status  integer     NULL,
        response_body    text        NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        completed_at     timestamptz NULL,
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, key),
        CHECK (state = 'processing' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'idempotency_keys',
      'flash_sales',
      'voucher_redemptions',
      'order_history',
      'order_lines',
      'orders',
      'vouchers',
      'prices',
    ]) {
      await q.query(`DROP TABLE ${t}`);
    }
  }
}
