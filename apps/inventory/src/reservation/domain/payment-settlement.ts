/** What happened to one reservation line when the payment arrived. */
export type LineSettlement =
  /** It was still held: reserved -> sold. */
  | 'committed'
  /** It had been released (TTL passed) and stock was taken again: available -> sold. */
  | 're_reserved'
  /** It had been released and the stock is gone. */
  | 'short';

/** The settlements in which the line's units were sold to the order (its reservation becomes committed). */
export const SOLD_SETTLEMENTS: readonly LineSettlement[] = ['committed', 're_reserved'];

/** One line of a paid order after the settlement pass. */
export interface SettledLine {
  sku: string;
  quantity: number;
  result: LineSettlement;
  /** Whether the SKU may be sold without stock (recorded as owed). */
  allowBackorder: boolean;
}

/** The policy's answer for a paid order (seed: "khi thanh toán thành công nhưng reservation đã hết hạn"). */
export type PaymentDecision =
  | { kind: 'committed'; reReserved: boolean }
  | { kind: 'backordered'; backordered: { sku: string; quantity: number }[] }
  | { kind: 'unavailable'; shortSkus: string[] };

/**
 * The after-payment policy: every line held or re-reserved -> committed; some lines short but every short
 * SKU allows backorder -> the rest is sold and the short lines are owed; any short SKU without backorder ->
 * nothing is sold and the saga refunds.
 */
export function decidePayment(lines: readonly SettledLine[]): PaymentDecision {
  const short = lines.filter((l) => l.result === 'short');
  if (short.length === 0)
    return { kind: 'committed', reReserved: lines.some((l) => l.result === 're_reserved') };
  const refused = short.filter((l) => !l.allowBackorder);
  if (refused.length > 0) return { kind: 'unavailable', shortSkus: refused.map((l) => l.sku) };
  return { kind: 'backordered', backordered: short.map(({ sku, quantity }) => ({ sku, quantity })) };
}
