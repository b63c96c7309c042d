import { z } from 'zod';
import { Currency, MinorUnits, OrderId, PricedLine } from '../primitives';

/** order.created v1: an accepted checkout, with everything inventory and payment need (fat payload). */
export const OrderCreatedV1 = z.object({
  orderId: OrderId,
  customerId: z.string().min(1).max(128),
  currency: Currency,
  lines: z.array(PricedLine).min(1).max(100),
  subtotal: MinorUnits,
  discount: MinorUnits,
  total: MinorUnits,
  voucherCode: z.string().min(1).max(64).nullable(),
  /** The PSP token the shopper paid with; a reference, never card data. */
  paymentToken: z.string().min(1).max(128),
});
export type OrderCreatedV1 = z.infer<typeof OrderCreatedV1>;
