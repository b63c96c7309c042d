import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DriftKind, LedgerTotals, StockCounters, driftOf, expectedCounters, repairable } from '../../domain';
import { rewriteCounters, skuLedgers } from '../../database/stock.repository';

/** Input of RepairDriftHandler: one tenant, optionally some SKUs; `dryRun` reports without repairing. */
export interface RepairDriftInput {
  tenantId: string;
  skus?: string[];
  dryRun?: boolean;
}

/** One SKU whose counters disagree with its ledgers. */
export interface Drift {
  tenantId: string;
  sku: string;
  kinds: DriftKind[];
  actual: StockCounters;
  expected: StockCounters;
  /** Whether the counters were rewritten from the ledgers. */
  repaired: boolean;
}

/**
 * RepairDriftHandler: recomputes every counter of a SKU from its ledgers (reserved = held reservations, sold =
 * committed and not returned, restocked = restock deltas, available = restocked - reserved - sold),
 * reports each difference and rewrites the counters from the ledgers. It reads one REPEATABLE READ
 * snapshot, so a reservation committing meanwhile is never mistaken for drift: its row write fails with a
 * serialization error and the next run looks again.
 */
@Injectable()
export class RepairDriftHandler {
  async execute(ds: DataSource, { tenantId, skus, dryRun = false }: RepairDriftInput): Promise<Drift[]> {
    return ds.transaction('REPEATABLE READ', async (tx) => {
      const rows = await skuLedgers(tx, tenantId, skus);
      const drifts: Drift[] = [];
      for (const row of rows) {
        const actual = {
          available: row.available,
          reserved: row.reserved,
          sold: row.sold,
          restocked: row.restocked,
        };
        const ledger: LedgerTotals = { restocked: row.ledgerRestocked, held: row.held, sold: row.ledgerSold };
        const kinds = driftOf(actual, ledger);
        if (kinds.length === 0) continue;
        const expected = expectedCounters(ledger);
        let repaired = false;
        if (!dryRun && repairable(ledger)) {
          repaired = await rewriteCounters(tx, tenantId, row.sku, expected, actual);
        }
        drifts.push({ tenantId, sku: row.sku, kinds, actual, expected, repaired });
      }
      return drifts;
    });
  }
}
