import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DriftKind, LedgerTotals, StockCounters, driftOf, expectedCounters, repairable } from '../../domain';
import { sql } from '../../database/sql';

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

interface LedgerRow extends StockCounters {
  sku: string;
  ledgerRestocked: number;
  held: number;
  ledgerSold: number;
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
      const { rows } = await sql<LedgerRow>(
        tx,
        `SELECT s.sku, s.available, s.reserved, s.sold, s.restocked::int AS restocked,
                COALESCE((SELECT sum(delta) FROM stock_restock r
                           WHERE r.tenant_id = s.tenant_id AND r.sku = s.sku), 0)::int AS "ledgerRestocked",
                COALESCE((SELECT sum(qty) FROM reservation v
                           WHERE v.tenant_id = s.tenant_id AND v.sku = s.sku AND v.status = 'held'), 0)::int AS held,
                COALESCE((SELECT sum(qty) FROM reservation v
                           WHERE v.tenant_id = s.tenant_id AND v.sku = s.sku AND v.status = 'committed'
                             AND v.returned_at IS NULL), 0)::int AS "ledgerSold"
           FROM stock s
          WHERE s.tenant_id = $1 AND ($2::text[] IS NULL OR s.sku = ANY($2))
          ORDER BY s.sku`,
        [tenantId, skus ?? null],
      );
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
          const { rowCount } = await sql(
            tx,
            `UPDATE stock SET available = $3, reserved = $4, sold = $5, restocked = $6, updated_at = now()
              WHERE tenant_id = $1 AND sku = $2 AND available = $7 AND reserved = $8 AND sold = $9`,
            [
              tenantId,
              row.sku,
              expected.available,
              expected.reserved,
              expected.sold,
              expected.restocked,
              actual.available,
              actual.reserved,
              actual.sold,
            ],
          );
          repaired = rowCount === 1;
        }
        drifts.push({ tenantId, sku: row.sku, kinds, actual, expected, repaired });
      }
      return drifts;
    });
  }
}
