import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A voucher's redemptions left, split over up to 16 slot rows instead of one counter: a popular voucher's
 * checkouts each lock one slot until they commit, so up to 16 commit side by side instead of queueing on one
 * row. Every slot keeps the no-oversell rule (conditional update, `CHECK (remaining >= 0)`); a redemption
 * records its slot, so giving it back returns the unit to the slot it came from.
 */
export class VoucherSlots1764780000000 implements MigrationInterface {
  name = 'VoucherSlots1764780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE voucher_slots (
        tenant_id text     NOT NULL,
        code      text     NOT NULL,
        slot      smallint NOT NULL CHECK (slot >= 0),
        remaining integer  NOT NULL CHECK (remaining >= 0),
        PRIMARY KEY (tenant_id, code, slot),
        FOREIGN KEY (tenant_id, code) REFERENCES vouchers (tenant_id, code)
      )`);
    // Existing vouchers keep what they have left, in one slot.
    await q.query(`
      INSERT INTO voucher_slots (tenant_id, code, slot, remaining)
      SELECT tenant_id, code, 0, max_redemptions - redeemed FROM vouchers`);
    await q.query(`ALTER TABLE voucher_redemptions ADD COLUMN slot smallint NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE voucher_redemptions ALTER COLUMN slot DROP DEFAULT`);
    await q.query(`ALTER TABLE vouchers DROP COLUMN redeemed`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vouchers ADD COLUMN redeemed integer NOT NULL DEFAULT 0`);
    await q.query(`
      UPDATE vouchers v SET redeemed = v.max_redemptions - s.left
        FROM (SELECT tenant_id, code, sum(remaining)::int AS left FROM voucher_slots GROUP BY 1, 2) s
       WHERE s.tenant_id = v.tenant_id AND s.code = v.code`);
    await q.query(
      `ALTER TABLE vouchers ADD CONSTRAINT vouchers_redeemed_check CHECK (redeemed >= 0 AND redeemed <= max_redemptions)`,
    );
    await q.query(`ALTER TABLE voucher_redemptions DROP COLUMN slot`);
    await q.query(`DROP TABLE voucher_slots`);
  }
}
