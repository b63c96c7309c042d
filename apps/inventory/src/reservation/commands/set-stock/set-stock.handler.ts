import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { StockRow, setAvailable, stockRow } from '../../database/stock.repository';
import { FillBackordersHandler, FillBackordersResult } from '../fill-backorders/fill-backorders.handler';

/** Input of SetStockHandler: the admin's count of sellable units on hand. */
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

/** What SetStockHandler did: the counters after it (backorders filled included) and the restock delta. */
export type SetStockResult = StockRow & { delta: number; backorders: FillBackordersResult };

/**
 * SetStockHandler (PUT /v1/admin/stock/{sku}): sets available to the counted on-hand units and records the
 * difference to the previous value as a restock (negative for shrinkage), so that
 * initial + restocks = available + reserved + sold keeps holding. Reserved and sold are never touched,
 * except that a restock (delta > 0) first fills the SKU's open backorders, oldest first (FillBackordersHandler).
 */
@Injectable()
export class SetStockHandler {
  private readonly fill: FillBackordersHandler;

  constructor(@Inject(OUTBOX_WRITER) outbox: OutboxWriter) {
    this.fill = new FillBackordersHandler(outbox);
  }

  async execute(tx: EntityManager, input: SetStockInput): Promise<SetStockResult> {
    const row = await setAvailable(
      tx,
      input.tenantId,
      input.sku,
      input.available,
      input.allowBackorder,
      input.reservationTtlSeconds,
    );
    if (row.delta <= 0) return { ...row, backorders: { filled: [], completedOrders: [] } };
    const backorders = await this.fill.execute(tx, { tenantId: input.tenantId, sku: input.sku });
    if (backorders.filled.length === 0) return { ...row, backorders };
    return { ...(await stockRow(tx, input.tenantId, input.sku)), delta: row.delta, backorders };
  }
}
