import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stock counters per (tenant, sku), the reservation rows that are their ledger, restocks and backorders.
 * The CHECKs are the last line of defence: no code path can take a counter below zero.
 */
export class CreateStockTables1764700000000 implements MigrationInterface {
  name = 'CreateStockTables1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE stock (
        tenant_id        text        NOT NULL,
        sku              text        NOT NULL,
        available        integer     NOT NULL DEFAULT 0,
        reserved         integer     NOT NULL DEFAULT 0,
        sold             integer     NOT NULL DEFAULT 0,
        -- initial stock plus every restock delta: conservation is restocked = available + reserved + sold
        restocked        bigint      NOT NULL DEFAULT 0,
        -- delta of the last PUT, so the restock ledger row is written by the same statement
        last_restock     integer     NOT NULL DEFAULT 0,
        allow_backorder  boolean     NOT NULL DEFAULT false,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, sku),
        CONSTRAINT stock_available_non_negative CHECK (available >= 0),
        CONSTRAINT stock_reserved_non_negative CHECK (reserved >= 0),
        CONSTRAINT stock_sold_non_negative CHECK (sold >= 0)
      )`);
    await q.query(`
      CREATE TABLE reservation (
        tenant_id       text        NOT NULL,
        order_id        uuid        NOT NULL,
        sku             text        NOT NULL,
        qty             integer     NOT NULL CHECK (qty > 0),
        status          text        NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'committed', 'released')),
        expires_at      timestamptz NOT NULL,
        release_reason  text        NULL CHECK (release_reason IN ('payment_failed', 'order_cancelled', 'expired')),
        -- what payment.succeeded decided for this line; set once, so a duplicate payment does nothing
        payment_outcome text        NULL CHECK (payment_outcome IN ('committed', 're_reserved', 'backordered', 'unavailable')),
        returned_at     timestamptz NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (order_id, sku),
        FOREIGN KEY (tenant_id, sku) REFERENCES stock (tenant_id, sku)
      )`);
    await q.query(
      `CREATE INDEX reservation_held_expiry_idx ON reservation (tenant_id, expires_at) WHERE status = 'held'`,
    );
    await q.query(`CREATE INDEX reservation_sku_status_idx ON reservation (tenant_id, sku, status)`);
    await q.query(`
      CREATE TABLE stock_restock (
        id              bigserial   PRIMARY KEY,
        tenant_id       text        NOT NULL,
        sku             text        NOT NULL,
        delta           integer     NOT NULL,
        available_after integer     NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (tenant_id, sku) REFERENCES stock (tenant_id, sku)
      )`);
    await q.query(`CREATE INDEX stock_restock_sku_idx ON stock_restock (tenant_id, sku)`);
    await q.query(`
      CREATE TABLE backorder (
        tenant_id   text        NOT NULL,
        order_id    uuid        NOT NULL,
        sku         text        NOT NULL,
        qty         integer     NOT NULL CHECK (qty > 0),
        status      text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'cancelled', 'fulfilled')),
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (order_id, sku),
        FOREIGN KEY (tenant_id, sku) REFERENCES stock (tenant_id, sku)
      )`);
    await q.query(`CREATE INDEX backorder_open_idx ON backorder (tenant_id, sku) WHERE status = 'open'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE backorder`);
    await q.query(`DROP TABLE stock_restock`);
    await q.query(`DROP TABLE reservation`);
    await q.query(`DROP TABLE stock`);
  }
}
