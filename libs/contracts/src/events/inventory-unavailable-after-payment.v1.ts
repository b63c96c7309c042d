import { z } from 'zod';
import { OrderId, Sku, StockLine } from '../primitives';

/** inventory.unavailable-after-payment v1: paid, reservation expired, stock gone, no backorder: refund. */
export const InventoryUnavailableAfterPaymentV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  shortSkus: z.array(Sku).min(1),
});
export type InventoryUnavailableAfterPaymentV1 = z.infer<typeof InventoryUnavailableAfterPaymentV1>;
