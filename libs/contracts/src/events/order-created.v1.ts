import { z } from 'zod';
import { Currency, ExternalId, MinorUnits, OrderId, PricedLine, VoucherCode } from '../primitives';

/** order.created v1: an accepted checkout, with everything inventory and payment need (fat payload). */
export const OrderCreatedV1 = z.object({
  orderId: OrderId,
  customerId: ExternalId(128, 'customerId'),
  currency: Currency,
  lines: z.array(PricedLine).min(1).max(100),
  subtotal: MinorUnits,
  discount: MinorUnits,
  total: MinorUnits,
  voucherCode: VoucherCode.nullable(),
  /** The PSP token the shopper paid with; a reference, never card data. */
  paymentToken: ExternalId(128, 'paymentToken'),
});
export type OrderCreatedV1 = z.infer<typeof OrderCreatedV1>;
