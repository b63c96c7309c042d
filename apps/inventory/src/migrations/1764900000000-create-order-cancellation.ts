import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders inventory saw cancelled: order.created and order.cancelled arrive on different topics, and an
 * order.created applied after the cancellation must not hold stock for an order nobody will pay.
 */
export class CreateOrderCancellation1764900000000 implements MigrationInterface {
  name = 'CreateOrderCancellation1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE order_cancellation (
        tenant_id     text        NOT NULL,
        order_id      uuid        NOT NULL,
        cancelled_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, order_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE order_cancellation`);
  }
}
