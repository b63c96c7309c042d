import { PricedLine } from '@checkout/contracts';

/** Who buys what at which prices: the part of an order that order.created and order.paid both carry. */
export interface PricedSnapshot {
  customerId: string;
  currency: string;
  lines: PricedLine[];
  subtotal: number;
  discount: number;
  total: number;
  voucherCode: string | null;
}

/** The order's priced snapshot as an event payload carries it (no other field of the order leaks in). */
export const pricedSnapshot = (o: PricedSnapshot): PricedSnapshot => ({
  customerId: o.customerId,
  currency: o.currency,
  lines: o.lines,
  subtotal: o.subtotal,
  discount: o.discount,
  total: o.total,
  voucherCode: o.voucherCode,
});
