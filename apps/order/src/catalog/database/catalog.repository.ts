import { Sql } from '../../checkout/database/idempotency.repository';
import { ListPrice } from '../../checkout/domain/pricing';

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

/** The tenant's price list, vouchers and flash sales. */
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

  /** Creates a voucher; false when the code exists already. */
  async createVoucher(
    db: Sql,
    tenantId: string,
    v: Omit<Voucher, 'redeemed' | 'customerId'>,
  ): Promise<boolean> {
    const rows: unknown[] = await db.query(
      `INSERT INTO vouchers (tenant_id, code, percent_off, max_redemptions) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [tenantId, v.code, v.percentOff, v.maxRedemptions],
    );
    return rows.length === 1;
  }

  /** One voucher, or undefined. */
  async voucher(db: Sql, tenantId: string, code: string): Promise<Voucher | undefined> {
    const [row] = await db.query(
      `SELECT code, percent_off, max_redemptions, redeemed, customer_id FROM vouchers WHERE tenant_id = $1 AND code = $2`,
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
      `INSERT INTO vouchers (tenant_id, code, percent_off, max_redemptions, source, customer_id, for_order_id)
       VALUES ($1, $2, $3, $4, 'apology', $5, $6)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [tenantId, v.code, v.percentOff, v.maxRedemptions, v.customerId, v.forOrderId],
    );
    if (inserted.length === 1) return 'issued';
    const existing: unknown[] = await tx.query(
      `SELECT 1 FROM vouchers WHERE tenant_id = $1 AND for_order_id = $2`,
      [tenantId, v.forOrderId],
    );
    return existing.length === 1 ? 'already-issued' : 'code-taken';
  }

  /**
   * Takes one redemption for an order: a conditional update on the counter (the no-oversell rule applied to
   * vouchers) plus one redemption row per order. Returns the voucher's percentage, or null when none is left.
   */
  async redeemVoucher(tx: Sql, tenantId: string, code: string, orderId: string): Promise<number | null> {
    const [rows]: [{ percent_off: number }[], number] = await tx.query(
      `UPDATE vouchers SET redeemed = redeemed + 1
        WHERE tenant_id = $1 AND code = $2 AND redeemed < max_redemptions
        RETURNING percent_off`,
      [tenantId, code],
    );
    if (rows.length === 0) return null;
    await tx.query(`INSERT INTO voucher_redemptions (order_id, tenant_id, code) VALUES ($1, $2, $3)`, [
      orderId,
      tenantId,
      code,
    ]);
    return rows[0].percent_off;
  }

  /** Compensation of redeemVoucher: gives the order's redemption back once; nothing redeemed is a no-op. */
  async returnVoucher(tx: Sql, tenantId: string, orderId: string): Promise<boolean> {
    const [rows]: [{ code: string }[], number] = await tx.query(
      `UPDATE voucher_redemptions SET returned_at = now()
        WHERE order_id = $1 AND tenant_id = $2 AND returned_at IS NULL RETURNING code`,
      [orderId, tenantId],
    );
    if (rows.length === 0) return false;
    await tx.query(
      `UPDATE vouchers SET redeemed = redeemed - 1 WHERE tenant_id = $1 AND code = $2 AND redeemed > 0`,
      [tenantId, rows[0].code],
    );
    return true;
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
