import { z } from 'zod';
import { Currency, MinorUnits, OrderId } from '../primitives';

/** payment.refunded v1: a successful charge was refunded (compensation of charge), at most once. */
export const PaymentRefundedV1 = z.object({
  orderId: OrderId,
  paymentId: z.uuid(),
  amount: MinorUnits,
  currency: Currency,
  pspRefundId: z.string().min(1).max(128),
  reason: z.string().min(1).max(255),
});
export type PaymentRefundedV1 = z.infer<typeof PaymentRefundedV1>;
