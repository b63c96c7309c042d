import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vouchers issued by the saga (the "paid but out of stock" apology): where a voucher came from, the order it
 * apologises for (one apology voucher per order), and the customer it is bound to (null: anyone).
 */
export class ApologyVouchers1764770000000 implements MigrationInterface {
  name = 'ApologyVouchers1764770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE vouchers
        ADD COLUMN source      text NOT NULL DEFAULT 'merchant' CHECK (source IN ('merchant', 'apology')),
        ADD COLUMN customer_id text NULL,
        ADD COLUMN for_order_id uuid NULL,
        ADD CONSTRAINT vouchers_apology_has_order CHECK (source = 'merchant' OR for_order_id IS NOT NULL)`);
    await q.query(
      `CREATE UNIQUE INDEX vouchers_apology_order_idx ON vouchers (tenant_id, for_order_id) WHERE for_order_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX vouchers_apology_order_idx`);
    await q.query(`
      ALTER TABLE vouchers DROP CONSTRAINT vouchers_apology_has_order,
        DROP COLUMN for_order_id, DROP COLUMN customer_id, DROP COLUMN source`);
  }
}
