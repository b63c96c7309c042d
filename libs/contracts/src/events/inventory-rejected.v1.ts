import { z } from 'zod';
import { OrderId, Sku, StockLine } from '../primitives';

/** inventory.rejected v1: not enough stock for at least one line; nothing was held. */
export const InventoryRejectedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  shortSkus: z.array(Sku).min(1),
  reason: z.enum(['insufficient_stock', 'unknown_sku']),
});
export type InventoryRejectedV1 = z.infer<typeof InventoryRejectedV1>;
