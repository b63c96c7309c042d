import { EntityManager } from 'typeorm';
import { OrderCreatedV1, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { Line, normalizeLines } from '../../domain';
import { releaseHeld, stockFlags, takeIntoReserved } from '../../database/stock.repository';
import { sql, withSavepoint } from '../../database/sql';
import { publishReleased } from '../release-stock/release-stock.handler';

/** Input of ReserveStock: the accepted order of one tenant. */
export interface ReserveStockInput {
  tenantId: string;
  order: OrderCreatedV1;
  /** The order.created event this reacts to (causation, correlation, trace). */
  cause?: SagaEvent;
}

/** What ReserveStock did. */
export type ReserveStockResult =
  | { outcome: 'reserved'; lines: Line[]; expiresAt: string }
  | { outcome: 'rejected'; shortSkus: string[]; reason: 'unknown_sku' | 'insufficient_stock' }
  | { outcome: 'duplicate' };

/** Settings of ReserveStock. */
export interface ReserveStockOptions {
  /** How long a reservation holds stock before the expiry job may release it, unless its SKU says otherwise. */
  ttlSeconds: number;
}

/**
 * ReserveStock: holds every line of an order or none, inside the caller's transaction, and writes
 * inventory.reserved or inventory.rejected to the outbox in that same transaction. Each line is a
 * conditional UPDATE judged by its row count, taken in SKU order so overlapping orders cannot deadlock.
 * Unknown SKUs reject with reason unknown_sku.
 */
export class ReserveStock {
  constructor(
    private readonly outbox: OutboxWriter,
    private readonly options: ReserveStockOptions,
  ) {}

  async execute(
    tx: EntityManager,
    { tenantId, order, cause }: ReserveStockInput,
  ): Promise<ReserveStockResult> {
    const lines = normalizeLines(order.lines);
    const existing = await sql(
      tx,
      `SELECT 1 FROM reservation WHERE tenant_id = $1 AND order_id = $2 LIMIT 1`,
      [tenantId, order.orderId],
    );
    // A second order.created for the same order (new event id) must not hold the stock twice.
    if (existing.rowCount > 0) return { outcome: 'duplicate' };

    // SKUs are never deleted, so whether one exists cannot change under us: checked without a lock.
    const known = await stockFlags(
      tx,
      tenantId,
      lines.map((l) => l.sku),
    );
    const unknown = lines.filter((l) => !known.has(l.sku)).map((l) => l.sku);
    if (unknown.length > 0) return this.reject(tx, tenantId, order, lines, unknown, 'unknown_sku', cause);

    let attempt = await this.holdAll(tx, tenantId, order, lines, cause);
    if (attempt.short.length > 0) {
      // Lazy expiry: holds past their TTL on the short SKUs are released now, then one more try.
      const released = await releaseHeld(tx, {
        tenantId,
        skus: attempt.short,
        reason: 'expired',
        onlyExpired: true,
        skipLocked: true,
      });
      if (released.length > 0) {
        await publishReleased(this.outbox, tx, released, 'expired');
        attempt = await this.holdAll(tx, tenantId, order, lines, cause);
      }
    }
    if (attempt.short.length > 0) {
      return this.reject(tx, tenantId, order, lines, attempt.short, 'insufficient_stock', cause);
    }
    return { outcome: 'reserved', lines, expiresAt: attempt.expiresAt };
  }

  /**
   * Writes the reservation rows and inventory.reserved first, then takes every line in SKU order: the hot
   * stock row is locked only from its UPDATE to the commit. On any shortage everything since the savepoint
   * (rows, event, the lines already taken and their locks) is rolled back and the short SKUs are named.
   */
  private async holdAll(
    tx: EntityManager,
    tenantId: string,
    order: OrderCreatedV1,
    lines: Line[],
    cause: SagaEvent | undefined,
  ): Promise<{ short: string[]; expiresAt: string }> {
    return withSavepoint(tx, 'reserve_order', async () => {
      // Each line holds for its own SKU's TTL (the service default when the SKU has none).
      const { rows } = await sql<{ expires_at: Date }>(
        tx,
        `WITH inserted AS (
           INSERT INTO reservation (tenant_id, order_id, sku, qty, status, expires_at)
           SELECT $1, $2, l.sku, l.qty, 'held',
                  now() + make_interval(secs => COALESCE(s.reservation_ttl_seconds, $5))
             FROM unnest($3::text[], $4::int[]) AS l(sku, qty)
             JOIN stock s ON s.tenant_id = $1 AND s.sku = l.sku
           RETURNING expires_at)
         SELECT min(expires_at) AS expires_at FROM inserted`,
        [
          tenantId,
          order.orderId,
          lines.map((l) => l.sku),
          lines.map((l) => l.quantity),
          this.options.ttlSeconds,
        ],
      );
      // The order is held as long as its first-expiring line: that is the deadline payment must meet.
      const expiresAt = rows[0].expires_at.toISOString();
      await this.outbox.append(tx, {
        type: 'inventory.reserved',
        tenantId,
        sagaId: order.orderId,
        cause,
        payload: {
          orderId: order.orderId,
          lines,
          expiresAt,
          customerId: order.customerId,
          amount: order.total,
          currency: order.currency,
          paymentToken: order.paymentToken,
        },
      });
      const short: string[] = [];
      for (const line of lines) {
        if (!(await takeIntoReserved(tx, tenantId, line))) short.push(line.sku);
      }
      return { keep: short.length === 0, value: { short, expiresAt } };
    });
  }

  private async reject(
    tx: EntityManager,
    tenantId: string,
    order: OrderCreatedV1,
    lines: Line[],
    shortSkus: string[],
    reason: 'unknown_sku' | 'insufficient_stock',
    cause: SagaEvent | undefined,
  ): Promise<ReserveStockResult> {
    await this.outbox.append(tx, {
      type: 'inventory.rejected',
      tenantId,
      sagaId: order.orderId,
      cause,
      payload: { orderId: order.orderId, lines, shortSkus, reason },
    });
    return { outcome: 'rejected', shortSkus, reason };
  }
}
