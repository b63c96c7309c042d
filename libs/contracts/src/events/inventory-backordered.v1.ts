import { z } from 'zod';
import { OrderId, StockLine } from '../primitives';

/** inventory.backordered v1: paid after the reservation expired, stock gone, the SKU allows backorder. */
export const InventoryBackorderedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
});
export type InventoryBackorderedV1 = z.infer<typeof InventoryBackorderedV1>;
