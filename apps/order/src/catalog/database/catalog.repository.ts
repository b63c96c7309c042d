import { randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Sql } from '../../database';
import { ListPrice } from '../../checkout/domain/pricing';
import { AnsweredCheckout } from '../../gate/stock-gate.provider';

/** How many slot rows a voucher's redemptions are split over (fewer when it has fewer redemptions). */
export const VOUCHER_SLOTS = 16;

/**
 * The tail of a voucher-creating statement: splits the inserted voucher `v`'s redemptions over
 * least($5, max) slots as evenly as possible. Returns one row per slot (none when nothing was inserted).
 */
const INSERT_SLOTS = `INSERT INTO voucher_slots (tenant_id, code, slot, remaining)
       SELECT v.tenant_id, v.code, s.n,
              v.max_redemptions / least($5::int, v.max_redemptions)
                + CASE WHEN s.n < v.max_redemptions % least($5::int, v.max_redemptions) THEN 1 ELSE 0 END
         FROM v, generate_series(0, least($5::int, v.max_redemptions) - 1) AS s(n)
       RETURNING 1`;

/** Which of a tenant's answered checkouts to read: those with a line of a SKU, or those completed since a time. */
export type AnsweredFilter = { sku: string } | { completedSince: Date };

/** One page of answered checkouts, and where the next page starts (null: none left). */
export interface AnsweredPage {
  answered: AnsweredCheckout[];
  after: string | null;
}

/** A voucher as stored. */
export interface Voucher {
  code: string;
  percentOff: number;
  maxRedemptions: number;
  redeemed: number;
  /** The only customer who may redeem it; null: anyone with the code. */
  customerId: string | null;
}

/** A voucher the saga issues: the apology for an order that was paid but could not be served. */
export interface ApologyVoucher {
  code: string;
  percentOff: number;
  maxRedemptions: number;
  customerId: string | null;
  forOrderId: string;
}

/** What issuing an apology voucher found. */
export type IssueOutcome = 'issued' | 'already-issued' | 'code-taken';

/** A flash sale as stored: whether the gate is on and where its units came from. */
export interface FlashSale {
  sku: string;
  enabled: boolean;
  source: 'inventory' | 'override';
  primedAvailable: number | null;
  updatedAt: string;
}

/** A flash sale that is on, and how long ago it was turned on (or primed again), by the database's clock. */
export interface EnabledFlashSale {
  sku: string;
  enabledForMs: number;
}

/** The tenant's price list, vouchers and flash sales. */
@Injectable()
export class CatalogRepository {
  /** Sets the price of a SKU (insert or replace). */
  async putPrice(db: Sql, tenantId: string, sku: string, unitPrice: number, currency: string) {
    const [row] = await db.query(
      `INSERT INTO prices (tenant_id, sku, unit_price, currency) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, sku) DO UPDATE SET unit_price = EXCLUDED.unit_price, currency = EXCLUDED.currency, updated_at = now()
       RETURNING sku, unit_price, currency, updated_at`,
      [tenantId, sku, unitPrice, currency],
    );
    return {
      sku: row.sku as string,
      unitPrice: Number(row.unit_price),
      currency: row.currency as string,
      updatedAt: (row.updated_at as Date).toISOString(),
    };
  }

  /** Current prices of the given SKUs (unknown SKUs are simply absent). */
  async prices(db: Sql, tenantId: string, skus: string[]): Promise<ListPrice[]> {
    const rows: { sku: string; unit_price: string; currency: string }[] = await db.query(
      `SELECT sku, unit_price, currency FROM prices WHERE tenant_id = $1 AND sku = ANY($2::text[])`,
      [tenantId, skus],
    );
    return rows.map((r) => ({ sku: r.sku, unitPrice: Number(r.unit_price), currency: r.currency }));
  }

  /** Creates a voucher with its redemption slots, in one statement; false when the code exists already. */
  async createVoucher(
    db: Sql,
    tenantId: string,
    v: Omit<Voucher, 'redeemed' | 'customerId'>,
  ): Promise<boolean> {
    const rows: unknown[] = await db.query(
      `WITH v AS (
         INSERT INTO vouchers (tenant_id, code, percent_off, max_redemptions) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING tenant_id, code, max_redemptions)
       ${INSERT_SLOTS}`,
      [tenantId, v.code, v.percentOff, v.maxRedemptions, VOUCHER_SLOTS],
    );
    return rows.length > 0;
  }

  /** One voucher, or undefined. */
  async voucher(db: Sql, tenantId: string, code: string): Promise<Voucher | undefined> {
    const [row] = await db.query(
      `SELECT v.code, v.percent_off, v.max_redemptions, v.customer_id,
              v.max_redemptions - (SELECT coalesce(sum(remaining), 0)::int FROM voucher_slots s
                                    WHERE s.tenant_id = v.tenant_id AND s.code = v.code) AS redeemed
         FROM vouchers v WHERE v.tenant_id = $1 AND v.code = $2`,
      [tenantId, code],
    );
    return row
      ? {
          code: row.code,
          percentOff: row.percent_off,
          maxRedemptions: row.max_redemptions,
          redeemed: row.redeemed,
          customerId: row.customer_id,
        }
      : undefined;
  }

  /**
   * Creates the apology voucher of an order, once: a second one for the same order (redelivery, replay) is
   * `already-issued`; a code some other voucher has is `code-taken` (the customer's code cannot be honoured).
   */
  async issueApologyVoucher(tx: Sql, tenantId: string, v: ApologyVoucher): Promise<IssueOutcome> {
    const inserted: unknown[] = await tx.query(
      `WITH v AS (
         INSERT INTO vouchers (tenant_id, code, percent_off, max_redemptions, source, customer_id, for_order_id)
         VALUES ($1, $2, $3, $4, 'apology', $6, $7)
         ON CONFLICT DO NOTHING RETURNING tenant_id, code, max_redemptions)
       ${INSERT_SLOTS}`,
      [tenantId, v.code, v.percentOff, v.maxRedemptions, VOUCHER_SLOTS, v.customerId, v.forOrderId],
    );
    if (inserted.length > 0) return 'issued';
    const existing: unknown[] = await tx.query(
      `SELECT 1 FROM vouchers WHERE tenant_id = $1 AND for_order_id = $2`,
      [tenantId, v.forOrderId],
    );
    return existing.length === 1 ? 'already-issued' : 'code-taken';
  }

  /**
   * Takes one redemption for an order on one voucher slot, in one statement; the voucher's percentage, or
   * null when none is left (docs/design/order-checkout.md).
   */
  async redeemVoucher(tx: Sql, tenantId: string, code: string, orderId: string): Promise<number | null> {
    const start = randomInt(VOUCHER_SLOTS);
    const redeem = async (lock: 'FOR UPDATE SKIP LOCKED' | 'FOR UPDATE') => {
      const rows: { percent_off: number }[] = await tx.query(
        `WITH free AS (
           SELECT slot FROM voucher_slots
            WHERE tenant_id = $1 AND code = $2 AND remaining > 0
            ORDER BY (slot + ${VOUCHER_SLOTS} - $4) % ${VOUCHER_SLOTS} LIMIT 1 ${lock}),
         taken AS (
           UPDATE voucher_slots s SET remaining = s.remaining - 1 FROM free
            WHERE s.tenant_id = $1 AND s.code = $2 AND s.slot = free.slot AND s.remaining > 0
            RETURNING s.slot)
         INSERT INTO voucher_redemptions (order_id, tenant_id, code, slot)
         SELECT $3, $1, $2, slot FROM taken
         RETURNING (SELECT percent_off FROM vouchers WHERE tenant_id = $1 AND code = $2)`,
        [tenantId, code, orderId, start],
      );
      return rows.length === 0 ? null : rows[0].percent_off;
    };
    return (await redeem('FOR UPDATE SKIP LOCKED')) ?? (await redeem('FOR UPDATE'));
  }

  /** Compensation of redeemVoucher: gives the order's redemption back to its slot once; none is a no-op. */
  async returnVoucher(tx: Sql, tenantId: string, orderId: string): Promise<boolean> {
    const rows: unknown[] = await tx.query(
      `WITH returned AS (
         UPDATE voucher_redemptions SET returned_at = now()
          WHERE order_id = $1 AND tenant_id = $2 AND returned_at IS NULL
          RETURNING tenant_id, code, slot)
       UPDATE voucher_slots s SET remaining = s.remaining + 1 FROM returned
        WHERE s.tenant_id = returned.tenant_id AND s.code = returned.code AND s.slot = returned.slot
       RETURNING 1`,
      [orderId, tenantId],
    );
    return rows.length === 1;
  }

  /** The tenant's flash sales that are on. Read on every re-arm pass: it reads flash_sales alone. */
  async enabledFlashSales(db: Sql, tenantId: string): Promise<EnabledFlashSale[]> {
    const rows: { sku: string; enabled_for_ms: string }[] = await db.query(
      `SELECT sku, (extract(epoch FROM now() - updated_at) * 1000)::bigint AS enabled_for_ms
         FROM flash_sales WHERE tenant_id = $1 AND enabled ORDER BY sku`,
      [tenantId],
    );
    return rows.map((r) => ({ sku: r.sku, enabledForMs: Number(r.enabled_for_ms) }));
  }

  /**
   * An estimate of the units an enabled flash sale's gate has left: the units it was primed with less those of
   * the orders placed since that are not rejected or cancelled. Used to re-arm a gate whose Redis counter was
   * lost; inventory's gate re-sync then brings it to the database's figure. Null when the sale is not on.
   */
  async flashSaleUnitsLeft(db: Sql, tenantId: string, sku: string): Promise<number | null> {
    const rows: { units_left: string }[] = await db.query(
      `SELECT GREATEST(0, COALESCE(f.primed_available, 0) - COALESCE((
                SELECT sum(l.quantity)
                  FROM order_lines l JOIN orders o ON o.id = l.order_id
                 WHERE l.tenant_id = f.tenant_id AND l.sku = f.sku
                   AND o.created_at >= f.updated_at AND o.status NOT IN ('REJECTED', 'CANCELLED')), 0)) AS units_left
         FROM flash_sales f
        WHERE f.tenant_id = $1 AND f.sku = $2 AND f.enabled`,
      [tenantId, sku],
    );
    return rows.length === 0 ? null : Number(rows[0].units_left);
  }

  /**
   * One page of a tenant's Idempotency-Keys that hold an answer still to be replayed: those of orders with a line
   * of a SKU, or those completed since a time. What the gate must know as answered (docs/design/order-checkout.md,
   * "Refused without the database"). Pass `after` from the previous page (null on the first); the page's `after`
   * is null once none is left. A SKU's pages walk its order lines (order_lines_sku_idx), so they cost what the
   * SKU has sold, however many orders the tenant has; a page may hold fewer answers than lines (keys expired).
   */
  async answeredCheckouts(
    db: Sql,
    tenantId: string,
    filter: AnsweredFilter,
    after: string | null,
    limit: number,
  ): Promise<AnsweredPage> {
    if ('sku' in filter) {
      const rows: { order_id: string; key: string | null; expires_at: Date | null }[] = await db.query(
        `WITH page AS MATERIALIZED (
           SELECT l.order_id FROM order_lines l
            WHERE l.tenant_id = $1 AND l.sku = $2 AND l.order_id > $3
            ORDER BY l.order_id LIMIT $4)
         SELECT page.order_id, k.key, k.expires_at
           FROM page
           LEFT JOIN orders o ON o.id = page.order_id
           LEFT JOIN idempotency_keys k
                  ON k.tenant_id = $1 AND k.key = o.idempotency_key AND k.order_id = o.id
                 AND k.state = 'completed' AND k.expires_at > now()
          ORDER BY page.order_id`,
        [tenantId, filter.sku, after ?? '00000000-0000-0000-0000-000000000000', limit],
      );
      return {
        answered: rows.flatMap((r) =>
          r.key && r.expires_at ? [{ key: r.key, expiresAt: r.expires_at }] : [],
        ),
        after: rows.length < limit ? null : rows[rows.length - 1].order_id,
      };
    }
    const rows: { key: string; expires_at: Date }[] = await db.query(
      `SELECT k.key, k.expires_at FROM idempotency_keys k
        WHERE k.tenant_id = $1 AND k.state = 'completed' AND k.expires_at > now() AND k.key > $2
          AND k.completed_at >= $4
        ORDER BY k.key LIMIT $3`,
      [tenantId, after ?? '', limit, filter.completedSince],
    );
    return {
      answered: rows.map((r) => ({ key: r.key, expiresAt: r.expires_at })),
      after: rows.length < limit ? null : rows[rows.length - 1].key,
    };
  }

  /** Records a flash sale's state. */
  async putFlashSale(
    db: Sql,
    tenantId: string,
    sku: string,
    enabled: boolean,
    source: FlashSale['source'],
    primedAvailable: number | null,
  ): Promise<FlashSale> {
    const [row] = await db.query(
      `INSERT INTO flash_sales (tenant_id, sku, enabled, source, primed_available) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, sku) DO UPDATE
         SET enabled = EXCLUDED.enabled, source = EXCLUDED.source, primed_available = EXCLUDED.primed_available, updated_at = now()
       RETURNING sku, enabled, source, primed_available, updated_at`,
      [tenantId, sku, enabled, source, primedAvailable],
    );
    return {
      sku: row.sku,
      enabled: row.enabled,
      source: row.source,
      primedAvailable: row.primed_available,
      updatedAt: (row.updated_at as Date).toISOString(),
    };
  }
}
