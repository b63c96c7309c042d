import { z } from 'zod';
import {
  Currency,
  ExternalId,
  MinorUnits,
  OrderId,
  PricedLine,
  TenantId,
  Timestamp,
  VoucherCode,
} from '../primitives';

/**
 * order.paid v1: the public contract other teams consume. Backward compatible within v1: fields are only
 * ever added as optional, never removed, renamed or retyped.
 */
export const OrderPaidV1 = z.object({
  orderId: OrderId.describe('The order, also the Kafka key and the saga id.'),
  tenantId: TenantId.describe('The merchant the order belongs to.'),
  customerId: ExternalId(128, 'customerId').describe('The merchant-side customer id given at checkout.'),
  currency: Currency,
  lines: z.array(PricedLine).min(1).max(100).describe('Lines with the prices snapshotted at checkout.'),
  subtotal: MinorUnits.describe('Sum of unitPrice * quantity, in minor units.'),
  discount: MinorUnits.describe('Voucher discount, in minor units.'),
  total: MinorUnits.describe('What the customer paid, in minor units.'),
  voucherCode: VoucherCode.nullable(),
  paymentId: z.uuid().describe('Our payment attempt id.'),
  pspReference: z.string().nullable().describe("The PSP's charge id."),
  paidAt: Timestamp.describe('When the PSP reported the charge as succeeded.'),
});
export type OrderPaidV1 = z.infer<typeof OrderPaidV1>;
