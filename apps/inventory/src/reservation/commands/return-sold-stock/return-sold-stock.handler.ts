import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Line } from '../../domain';
import { soldToAvailable } from '../../database/stock.repository';
import { sql } from '../../database/sql';

/** Input of ReturnSoldStockHandler: the order whose shipment failed. */
export interface ReturnSoldStockInput {
  tenantId: string;
  orderId: string;
}

/**
 * ReturnSoldStockHandler, the compensation of CommitStockHandler when the shipment fails: the order's sold units go back
 * to available and its open backorders are cancelled. Idempotent: each committed line is returned once
 * (returned_at), a second call finds nothing.
 */
@Injectable()
export class ReturnSoldStockHandler {
  async execute(tx: EntityManager, { tenantId, orderId }: ReturnSoldStockInput): Promise<Line[]> {
    const { rows } = await sql<{ sku: string; qty: number }>(
      tx,
      `WITH returned AS (
         UPDATE reservation SET returned_at = now(), updated_at = now()
          WHERE tenant_id = $1 AND order_id = $2 AND status = 'committed' AND returned_at IS NULL
         RETURNING sku, qty)
       SELECT sku, qty FROM returned ORDER BY sku`,
      [tenantId, orderId],
    );
    for (const r of rows) await soldToAvailable(tx, tenantId, { sku: r.sku, quantity: r.qty });
    await sql(
      tx,
      `UPDATE backorder SET status = 'cancelled', updated_at = now()
        WHERE tenant_id = $1 AND order_id = $2 AND status = 'open'`,
      [tenantId, orderId],
    );
    return rows.map((r) => ({ sku: r.sku, quantity: r.qty }));
  }
}
