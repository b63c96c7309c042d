import { InventoryError } from './inventory.errors';

/** A (sku, quantity) pair as inventory handles it. */
export interface Line {
  sku: string;
  quantity: number;
}

/** Largest quantity of one SKU in one order (the contract's per-line limit). */
export const MAX_LINE_QUANTITY = 1000;

/** Code-unit order, the same in every process, so every transaction locks stock rows in one global order. */
export const compareSku = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The lines of an order as they are locked: one per SKU (duplicates merged), sorted by SKU so that two
 * transactions touching overlapping SKUs always take the row locks in the same order and cannot deadlock.
 */
export function normalizeLines(lines: readonly Line[]): Line[] {
  const bySku = new Map<string, number>();
  for (const { sku, quantity } of lines) bySku.set(sku, (bySku.get(sku) ?? 0) + quantity);
  const merged = [...bySku]
    .map(([sku, quantity]) => ({ sku, quantity }))
    .sort((a, b) => compareSku(a.sku, b.sku));
  const tooLarge = merged.find((l) => l.quantity > MAX_LINE_QUANTITY);
  if (tooLarge) {
    throw new InventoryError(
      'INVENTORY.LINE_TOO_LARGE',
      `${tooLarge.sku}: ${tooLarge.quantity} units in one order, at most ${MAX_LINE_QUANTITY}`,
    );
  }
  return merged;
}
