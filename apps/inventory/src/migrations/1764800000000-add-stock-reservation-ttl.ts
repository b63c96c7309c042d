import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-SKU reservation TTL: a SKU may hold its reservations shorter or longer than the service default
 * (INVENTORY_RESERVATION_TTL_SECONDS). NULL follows the default.
 */
export class AddStockReservationTtl1764800000000 implements MigrationInterface {
  name = 'AddStockReservationTtl1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE stock ADD COLUMN reservation_ttl_seconds integer NULL
        CONSTRAINT stock_reservation_ttl_range CHECK (reservation_ttl_seconds BETWEEN 1 AND 86400)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stock DROP COLUMN reservation_ttl_seconds`);
  }
}
