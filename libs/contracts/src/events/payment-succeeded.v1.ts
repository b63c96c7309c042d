import { z } from 'zod';
import { Currency, MinorUnits, OrderId, Timestamp } from '../primitives';

/** payment.succeeded v1: the PSP captured the money for this order, exactly once. */
export const PaymentSucceededV1 = z.object({
  orderId: OrderId,
  paymentId: z.uuid(),
  amount: MinorUnits,
  currency: Currency,
  pspReference: z.string().min(1).max(128).nullable(),
  /** Which source told us: the synchronous response, a webhook, or reconciliation. */
  source: z.enum(['response', 'webhook', 'reconciliation']),
  succeededAt: Timestamp,
});
export type PaymentSucceededV1 = z.infer<typeof PaymentSucceededV1>;
