import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { Line, compareSku } from '../../domain';
import { sql } from '../../database/sql';
import { recordOutcome } from '../../reservation.metrics';

/** Input of FillBackordersHandler: the SKU whose available units just went up. */
export interface FillBackordersInput {
  tenantId: string;
  sku: string;
  cause?: SagaEvent;
}

/** What FillBackordersHandler did. */
export interface FillBackordersResult {
  /** Backorder lines of this SKU filled, oldest first. */
  filled: { orderId: string; quantity: number }[];
  /** Orders with nothing left owed: each got its inventory.committed. */
  completedOrders: string[];
}

/**
 * One statement: the SKU's open backorders are locked oldest first and filled in that order as long as the
 * available units cover them (strict first come, first served: a big old backorder is not overtaken by a
 * later small one). Filled units move available -> sold with a conditional UPDATE judged by its row count,
 * and the order's reservation line (released, payment_outcome backordered) becomes committed, so the ledger
 * of `sold` (committed, not returned reservations) keeps matching the counter.
 */
const FILL = `
  WITH locked AS (
    SELECT order_id, qty, created_at FROM backorder
     WHERE tenant_id = $1 AND sku = $2 AND status = 'open'
     ORDER BY created_at, order_id FOR UPDATE),
  queue AS (
    SELECT order_id, qty, sum(qty) OVER (ORDER BY created_at, order_id) AS running FROM locked),
  filled AS (
    UPDATE backorder b SET status = 'fulfilled', updated_at = now()
      FROM queue q, stock s
     WHERE b.tenant_id = $1 AND b.sku = $2 AND b.order_id = q.order_id AND b.status = 'open'
       AND s.tenant_id = $1 AND s.sku = $2 AND q.running <= s.available
    RETURNING b.order_id, b.qty, b.created_at),
  total AS (SELECT coalesce(sum(qty), 0)::int AS units, count(*)::int AS lines FROM filled),
  taken AS (
    UPDATE stock s SET available = s.available - t.units, sold = s.sold + t.units, updated_at = now()
      FROM total t
     WHERE s.tenant_id = $1 AND s.sku = $2 AND t.units > 0 AND s.available >= t.units
    RETURNING 1),
  ledger AS (
    UPDATE reservation r SET status = 'committed', updated_at = now()
      FROM filled f
     WHERE r.tenant_id = $1 AND r.sku = $2 AND r.order_id = f.order_id
       AND r.status = 'released' AND r.payment_outcome = 'backordered'
    RETURNING r.order_id)
  SELECT f.order_id AS "orderId", f.qty AS quantity,
         (SELECT units FROM total) AS units, (SELECT count(*) FROM taken)::int AS taken,
         (SELECT count(*) FROM ledger)::int AS ledger
    FROM filled f ORDER BY f.created_at, f.order_id`;

/**
 * FillBackordersHandler, run by a restock: units owed to paid orders (backorders) are served before anyone else
 * can reserve them, oldest first. An order with nothing left owed gets inventory.committed (its backordered
 * lines are now sold, reReserved: the stock was taken after payment). Idempotent: only open backorders move.
 */
@Injectable()
export class FillBackordersHandler {
  constructor(@Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter) {}

  async execute(
    tx: EntityManager,
    { tenantId, sku, cause }: FillBackordersInput,
  ): Promise<FillBackordersResult> {
    const { rows } = await sql<{
      orderId: string;
      quantity: number;
      units: number;
      taken: number;
      ledger: number;
    }>(tx, FILL, [tenantId, sku]);
    if (rows.length === 0) return { filled: [], completedOrders: [] };
    // Under the locks the queue and the conditional UPDATE see the same units: a mismatch is a bug, and
    // throwing rolls the restock back rather than selling units the counter does not show.
    if (rows[0].taken !== 1 || rows[0].ledger !== rows.length) {
      throw new Error(
        `backorder fill of ${sku}: ${rows.length} lines, stock moved ${rows[0].taken}, ledger ${rows[0].ledger}`,
      );
    }
    const { rows: completed } = await sql<{ orderId: string; lines: Line[] }>(
      tx,
      `SELECT order_id AS "orderId",
              jsonb_agg(jsonb_build_object('sku', sku, 'quantity', qty) ORDER BY sku) AS lines
         FROM backorder
        WHERE tenant_id = $1 AND order_id = ANY($2::uuid[])
        GROUP BY order_id
       HAVING bool_and(status = 'fulfilled')
        ORDER BY order_id`,
      [tenantId, rows.map((r) => r.orderId)],
    );
    for (const { orderId, lines } of completed) {
      await this.outbox.append(tx, {
        type: 'inventory.committed',
        tenantId,
        sagaId: orderId,
        cause,
        payload: { orderId, lines: lines.sort((a, b) => compareSku(a.sku, b.sku)), reReserved: true },
      });
      recordOutcome(tx, tenantId, 'committed', 'backorder_filled');
    }
    return {
      filled: rows.map(({ orderId, quantity }) => ({ orderId, quantity })),
      completedOrders: completed.map((c) => c.orderId),
    };
  }
}
