import { z } from 'zod';
import { OrderId } from '../primitives';

/** order.cancelled v1: the order will not be served; stock and vouchers go back, a paid charge is refunded. */
export const OrderCancelledV1 = z.object({
  orderId: OrderId,
  reason: z.enum(['customer_request', 'payment_failed', 'rejected', 'timeout']),
  /** True when a successful charge may exist: payment must refund it if it does. */
  refundIfCharged: z.boolean(),
});
export type OrderCancelledV1 = z.infer<typeof OrderCancelledV1>;
