import { z } from 'zod';
import { OrderId } from '../primitives';

/** payment.failed v1: the PSP said no (never a timeout: that is `unknown`). */
export const PaymentFailedV1 = z.object({
  orderId: OrderId,
  paymentId: z.uuid(),
  reason: z.string().min(1).max(255),
  source: z.enum(['response', 'webhook', 'reconciliation']),
});
export type PaymentFailedV1 = z.infer<typeof PaymentFailedV1>;
