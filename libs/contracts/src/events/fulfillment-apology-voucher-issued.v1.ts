import { z } from 'zod';
import { ExternalId, OrderId, Timestamp, VoucherCode } from '../primitives';

/**
 * fulfillment.apology-voucher-issued v1: the "paid but out of stock" apology email, queued in the same
 * transaction, carries this voucher code; the order service (which owns vouchers) makes it redeemable:
 * single use, for the customer of the order when known.
 */
export const FulfillmentApologyVoucherIssuedV1 = z.object({
  orderId: OrderId,
  /** The order's customer as fulfillment knows it; null when order.created was not seen yet. */
  customerId: ExternalId(128, 'customerId').nullable(),
  code: VoucherCode,
  percentOff: z.number().int().min(1).max(100),
  maxRedemptions: z.literal(1),
  /** The apology email that carries the code. */
  notificationId: z.uuid(),
  issuedAt: Timestamp,
});
export type FulfillmentApologyVoucherIssuedV1 = z.infer<typeof FulfillmentApologyVoucherIssuedV1>;
