import { z } from 'zod';
import { OrderId, StockLine } from '../primitives';

/** inventory.released v1: a held reservation went back to available (compensation of reserve). */
export const InventoryReleasedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  reason: z.enum(['payment_failed', 'order_cancelled', 'expired']),
});
export type InventoryReleasedV1 = z.infer<typeof InventoryReleasedV1>;
