import { z } from 'zod';
import { Currency, ExternalId, MinorUnits, OrderId, StockLine, Timestamp } from '../primitives';

/** inventory.reserved v1: every line of the order is held until expiresAt; payment may charge. */
export const InventoryReservedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  expiresAt: Timestamp,
  customerId: ExternalId(128, 'customerId'),
  amount: MinorUnits,
  currency: Currency,
  paymentToken: ExternalId(128, 'paymentToken'),
});
export type InventoryReservedV1 = z.infer<typeof InventoryReservedV1>;
