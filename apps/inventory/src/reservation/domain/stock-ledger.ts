/** The counters of one SKU as stored on its stock row. */
export interface StockCounters {
  available: number;
  reserved: number;
  sold: number;
  /** Initial stock plus every restock delta: what conservation is checked against. */
  restocked: number;
}

/** The same counters recomputed from the ledgers: restock rows and reservation rows. */
export interface LedgerTotals {
  /** Sum of restock deltas. */
  restocked: number;
  /** Sum of held reservations. */
  held: number;
  /** Sum of committed reservations not returned by a failed shipment. */
  sold: number;
}

/** Kinds of drift the repair job reports. */
export type DriftKind = 'reserved' | 'sold' | 'available' | 'conservation';

/** Whether `restocked = available + reserved + sold` holds (docs/api.md: initial + restocks = a + r + s). */
export const conserves = (c: StockCounters): boolean => c.restocked === c.available + c.reserved + c.sold;

/** What the counters should be, derived from the ledgers (the rows are the truth, the counters a cache). */
export function expectedCounters(ledger: LedgerTotals): StockCounters {
  return {
    available: ledger.restocked - ledger.held - ledger.sold,
    reserved: ledger.held,
    sold: ledger.sold,
    restocked: ledger.restocked,
  };
}

/** Every way the stored counters differ from the ledgers; empty when the SKU is healthy. */
export function driftOf(actual: StockCounters, ledger: LedgerTotals): DriftKind[] {
  const expected = expectedCounters(ledger);
  const kinds: DriftKind[] = [];
  if (actual.reserved !== expected.reserved) kinds.push('reserved');
  if (actual.sold !== expected.sold) kinds.push('sold');
  if (actual.available !== expected.available) kinds.push('available');
  if (!conserves(actual) || actual.restocked !== expected.restocked) kinds.push('conservation');
  return kinds;
}

/** Whether the ledgers can be applied as they are: they never ask for negative available stock. */
export const repairable = (ledger: LedgerTotals): boolean => expectedCounters(ledger).available >= 0;

/**
 * Lazy expiry for readers: held reservations past their TTL that the release job has not reached yet
 * count as available again, so a dead job never shows stock as gone.
 */
export function visibleStock(c: Pick<StockCounters, 'available' | 'reserved' | 'sold'>, overdueHeld: number) {
  const overdue = Math.min(Math.max(overdueHeld, 0), c.reserved);
  return { available: c.available + overdue, reserved: c.reserved - overdue, sold: c.sold };
}
