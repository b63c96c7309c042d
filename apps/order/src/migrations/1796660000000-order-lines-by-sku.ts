import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A SKU's order lines, found without reading the tenant's other orders: the flash-sale gate learns a SKU's
 * answered checkouts from them before it is turned on, or on again after Redis lost it (MarkAnsweredCheckouts),
 * and the re-arm job sums the units ordered since a sale was primed. With `order_id` in the key both read the
 * index alone, page by page in its order.
 */
export class OrderLinesBySku1796660000000 implements MigrationInterface {
  name = 'OrderLinesBySku1796660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX order_lines_sku_idx ON order_lines (tenant_id, sku, order_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX order_lines_sku_idx`);
  }
}
