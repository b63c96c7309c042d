import { EntityManager } from 'typeorm';
import { StockRow, setAvailable } from '../../database/stock.repository';

/** Input of SetStock: the admin's count of sellable units on hand. */
export interface SetStockInput {
  tenantId: string;
  sku: string;
  /** Units on hand and free to sell, excluding what is reserved or sold. */
  available: number;
  /** Omitted: unchanged (false for a new SKU). */
  allowBackorder?: boolean;
  /** Seconds this SKU's reservations hold; null: the service default; omitted: unchanged. */
  reservationTtlSeconds?: number | null;
}

/**
 * SetStock (PUT /v1/admin/stock/{sku}): sets available to the counted on-hand units and records the
 * difference to the previous value as a restock (negative for shrinkage), so that
 * initial + restocks = available + reserved + sold keeps holding. Reserved and sold are never touched.
 */
export class SetStock {
  async execute(tx: EntityManager, input: SetStockInput): Promise<StockRow & { delta: number }> {
    return setAvailable(
      tx,
      input.tenantId,
      input.sku,
      input.available,
      input.allowBackorder,
      input.reservationTtlSeconds,
    );
  }
}
