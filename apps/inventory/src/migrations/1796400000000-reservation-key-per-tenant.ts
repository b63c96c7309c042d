import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reservation is keyed by (tenant, order, sku), like every other row of this database: an event of one
 * tenant can never collide with, or be answered from, another tenant's reservation of the same order id.
 */
export class ReservationKeyPerTenant1796400000000 implements MigrationInterface {
  name = 'ReservationKeyPerTenant1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE reservation DROP CONSTRAINT reservation_pkey, ADD PRIMARY KEY (tenant_id, order_id, sku)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE reservation DROP CONSTRAINT reservation_pkey, ADD PRIMARY KEY (order_id, sku)`,
    );
  }
}
