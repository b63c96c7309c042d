import { z } from 'zod';
import { Currency, MinorUnits, OrderId, StockLine, Timestamp } from '../primitives';

/** inventory.reserved v1: every line of the order is held until expiresAt; payment may charge. */
export const InventoryReservedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  expiresAt: Timestamp,
  customerId: z.string().min(1).max(128),
  amount: MinorUnits,
  currency: Currency,
  paymentToken: z.string().min(1).max(128),
});
export type InventoryReservedV1 = z.infer<typeof InventoryReservedV1>;
