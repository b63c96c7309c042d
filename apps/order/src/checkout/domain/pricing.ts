import { PricedLine } from '@checkout/contracts';
import { CurrencyMismatch, OrderTotalTooLarge, PriceChanged, UnknownSku, ZeroTotal } from './checkout.errors';

/** Highest unit price a price list accepts, in minor units (10^12: 10 billion in a 2-decimal currency). */
export const MAX_UNIT_PRICE = 1_000_000_000_000;

/**
 * Highest order total, in minor units: 10^15, below 2^53 so every amount of an order (lines, subtotal, total,
 * the charge) is an exact JavaScript integer and fits the contracts' MinorUnits and the bigint columns.
 */
export const MAX_ORDER_TOTAL = 1_000_000_000_000_000;

/** A line as the shopper sent it: unitPrice is what they saw, if they say. */
export interface RequestedLine {
  sku: string;
  quantity: number;
  unitPrice?: number;
}

/** The tenant's current price of a SKU. */
export interface ListPrice {
  sku: string;
  unitPrice: number;
  currency: string;
}

/** Lines priced from the price list, before and after the voucher, with their totals. */
export interface PricedOrder {
  lines: PricedLine[];
  subtotal: number;
  discount: number;
  total: number;
}

/**
 * Recomputes every line from the price list (the server's price, never the shopper's) and checks the
 * shopper saw it. Throws UnknownSku, CurrencyMismatch, PriceChanged, OrderTotalTooLarge or ZeroTotal.
 */
export function priceLines(
  currency: string,
  requested: RequestedLine[],
  prices: ListPrice[],
  percentOff = 0,
): PricedOrder {
  const bySku = new Map(prices.map((p) => [p.sku, p]));
  const unknown = requested.filter((l) => !bySku.has(l.sku)).map((l) => l.sku);
  if (unknown.length) throw new UnknownSku(unknown);
  const current = requested.map((l) => bySku.get(l.sku)!);
  const mismatched = current.filter((p) => p.currency !== currency);
  if (mismatched.length) throw new CurrencyMismatch(currency, mismatched);
  const changed = requested
    .filter((l) => l.unitPrice !== undefined && l.unitPrice !== bySku.get(l.sku)!.unitPrice)
    .map((l) => ({ sku: l.sku, quoted: l.unitPrice!, unitPrice: bySku.get(l.sku)!.unitPrice }));
  if (changed.length) throw new PriceChanged(changed, current);
  const priced = applyVoucher(
    requested.map((l) => {
      const unitPrice = bySku.get(l.sku)!.unitPrice;
      return { sku: l.sku, quantity: l.quantity, unitPrice, discount: 0, lineTotal: 0 };
    }),
    percentOff,
  );
  if (priced.total === 0) throw new ZeroTotal();
  return priced;
}

/**
 * Applies a percentage voucher line by line, rounding each line's discount down (never over-discounts). All
 * arithmetic is on BigInt, so nothing rounds; a subtotal above MAX_ORDER_TOTAL throws OrderTotalTooLarge.
 */
export function applyVoucher(lines: PricedLine[], percentOff: number): PricedOrder {
  const percent = BigInt(percentOff);
  let subtotal = 0n;
  let discount = 0n;
  const discounted = lines.map((l) => {
    const gross = BigInt(l.unitPrice) * BigInt(l.quantity);
    const off = (gross * percent) / 100n; // BigInt division truncates: rounds down, as intended
    subtotal += gross;
    discount += off;
    return { gross, off, line: l };
  });
  if (subtotal > BigInt(MAX_ORDER_TOTAL)) throw new OrderTotalTooLarge(MAX_ORDER_TOTAL);
  return {
    lines: discounted.map(({ gross, off, line }) => ({
      ...line,
      discount: Number(off),
      lineTotal: Number(gross - off),
    })),
    subtotal: Number(subtotal),
    discount: Number(discount),
    total: Number(subtotal - discount),
  };
}
