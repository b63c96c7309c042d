import { z } from 'zod';
import { OrderId, Timestamp } from '../primitives';

/** A voucher code as merchants and the apology email write it: 1..64 of [A-Za-z0-9_-]. */
export const VoucherCode = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'voucher code must be 1..64 of [A-Za-z0-9_-]');

/**
 * fulfillment.apology-voucher-issued v1: the "paid but out of stock" apology email, queued in the same
 * transaction, carries this voucher code; the order service (which owns vouchers) makes it redeemable:
 * single use, for the customer of the order when known.
 */
export const FulfillmentApologyVoucherIssuedV1 = z.object({
  orderId: OrderId,
  /** The order's customer as fulfillment knows it; null when order.created was not seen yet. */
  customerId: z.string().min(1).max(128).nullable(),
  code: VoucherCode,
  percentOff: z.number().int().min(1).max(100),
  maxRedemptions: z.literal(1),
  /** The apology email that carries the code. */
  notificationId: z.uuid(),
  issuedAt: Timestamp,
});
export type FulfillmentApologyVoucherIssuedV1 = z.infer<typeof FulfillmentApologyVoucherIssuedV1>;
