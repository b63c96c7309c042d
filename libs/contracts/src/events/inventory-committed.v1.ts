import { z } from 'zod';
import { OrderId, StockLine } from '../primitives';

/** inventory.committed v1: the paid order's units moved from reserved (or re-reserved) to sold. */
export const InventoryCommittedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  /** True when the reservation had expired and the stock was taken again at payment time. */
  reReserved: z.boolean(),
});
export type InventoryCommittedV1 = z.infer<typeof InventoryCommittedV1>;
