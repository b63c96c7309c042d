import { PricedLine } from '@checkout/contracts';
import { CurrencyMismatch, PriceChanged, UnknownSku } from './checkout.errors';

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
 * shopper saw it. Throws UnknownSku, CurrencyMismatch or PriceChanged.
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
  return applyVoucher(
    requested.map((l) => {
      const unitPrice = bySku.get(l.sku)!.unitPrice;
      return { sku: l.sku, quantity: l.quantity, unitPrice, discount: 0, lineTotal: unitPrice * l.quantity };
    }),
    percentOff,
  );
}

/** Applies a percentage voucher line by line, rounding each line's discount down (never over-discounts). */
export function applyVoucher(lines: PricedLine[], percentOff: number): PricedOrder {
  const discounted = lines.map((l) => {
    const gross = l.unitPrice * l.quantity;
    const discount = Math.floor((gross * percentOff) / 100);
    return { ...l, discount, lineTotal: gross - discount };
  });
  const subtotal = discounted.reduce((s, l) => s + l.unitPrice * l.quantity, 0);
  const discount = discounted.reduce((s, l) => s + l.discount, 0);
  return { lines: discounted, subtotal, discount, total: subtotal - discount };
}
