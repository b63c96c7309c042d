import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EventType, OrderCreatedV1, SagaEvent } from '@checkout/contracts';
import { NewEvent, OutboxWriter, lockSagas } from '@checkout/messaging';
import { OUTBOX_WRITER, SERVICE_CONFIG } from '@checkout/service-kit';
import { InventoryConfig } from '../../../config/inventory.config';
import { Line, normalizeLines } from '../../domain';
import { releaseHeld, stockFlags } from '../../database/stock.repository';
import { BatchDecision, BatchOrder, holdOrders, seenOrders } from '../../database/reserve-batch.repository';
import { recordOutcome } from '../../reservation.metrics';
import { ReservationExpiryAlarm } from '../../expiry-alarm';
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
  | { outcome: 'duplicate' }
  /** inventory saw the order cancelled first: nothing is held and nothing published. */
  | { outcome: 'cancelled' };

/**
 * Settings of ReserveStock: INVENTORY_RESERVATION_TTL_SECONDS, how long a reservation holds stock before the
 * expiry job may release it, unless its SKU says otherwise.
 */
export type ReserveStockConfig = Pick<InventoryConfig, 'INVENTORY_RESERVATION_TTL_SECONDS'>;

/**
 * ReserveStockHandler: reserves many orders in the caller's one transaction (group commit), each order all
 * lines or none, and writes each order's inventory.reserved or inventory.rejected to the outbox in that same
 * transaction. Per tenant, one statement locks the batch's stock rows in SKU order and takes what fits
 * (see holdOrders); unknown SKUs reject with unknown_sku; an order already reserved (or twice in the batch)
 * is a duplicate and an order inventory saw cancelled is skipped: neither changes anything. Results are in
 * input order.
 */
@Injectable()
export class ReserveStockHandler {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(SERVICE_CONFIG) private readonly config: ReserveStockConfig,
    @Optional() private readonly expiry?: ReservationExpiryAlarm,
  ) {}

  /**
   * A chunk of order.created: every order of the chunk is locked first, in lockSagas' stable order, so its
   * order.cancelled (another consumer group) waits for this or is seen by it.
   */
  async onOrdersCreated(
    tx: EntityManager,
    events: readonly SagaEvent<'order.created'>[],
  ): Promise<ReserveStockResult[]> {
    await lockSagas(
      tx,
      events.map((e) => ({ tenantId: e.tenantId, orderId: e.payload.orderId })),
    );
    return this.execute(
      tx,
      events.map((event) => ({ tenantId: event.tenantId, order: event.payload, cause: event })),
    );
  }

  async execute(tx: EntityManager, inputs: readonly ReserveStockInput[]): Promise<ReserveStockResult[]> {
    // A line over the per-order limit is a broken rule for the whole batch: the caller splits and parks it.
    const prepared = inputs.map((input) => ({ ...input, lines: normalizeLines(input.order.lines) }));
    const results: ReserveStockResult[] = new Array(inputs.length);
    const events: NewEvent<EventType>[] = [];
    const sequences = new Map<string, number[]>();
    // Tenants in a fixed order too: a batch locks one tenant's rows after the other's, like every batch.
    const tenants = [...new Set(prepared.map((p) => p.tenantId))].sort();
    for (const tenantId of tenants) {
      const mine = prepared.map((p, i) => ({ ...p, i })).filter((p) => p.tenantId === tenantId);
      await this.reserveForTenant(tx, tenantId, mine, results, events, sequences);
    }
    // Every order's own event, all in two statements: the stock rows stay locked until the commit that follows.
    await this.outbox.appendAll(tx, events, sequences);
    let earliest: string | undefined;
    results.forEach((r, i) => {
      if (r.outcome === 'reserved') {
        recordOutcome(tx, inputs[i].tenantId, 'reserved');
        if (earliest === undefined || r.expiresAt < earliest) earliest = r.expiresAt;
      }
      if (r.outcome === 'rejected') recordOutcome(tx, inputs[i].tenantId, 'rejected', r.reason);
    });
    if (earliest !== undefined) this.expiry?.heldUntil(new Date(earliest));
    return results;
  }

  private async reserveForTenant(
    tx: EntityManager,
    tenantId: string,
    inputs: (ReserveStockInput & { lines: Line[]; i: number })[],
    results: ReserveStockResult[],
    events: NewEvent<EventType>[],
    sequences: Map<string, number[]>,
  ): Promise<void> {
    const existing = await seenOrders(
      tx,
      tenantId,
      inputs.map((p) => p.order.orderId),
    );
    // A second order.created for the same order (new event id) must not hold the stock twice.
    const seen = new Set(existing.filter((r) => !r.cancelled).map((r) => r.orderId));
    const cancelled = new Set(existing.filter((r) => r.cancelled).map((r) => r.orderId));
    // SKUs are never deleted, so whether one exists cannot change under us: checked without a lock.
    const known = await stockFlags(tx, tenantId, [
      ...new Set(inputs.flatMap((p) => p.lines.map((l) => l.sku))),
    ]);
    const candidates: typeof inputs = [];
    for (const p of inputs) {
      if (seen.has(p.order.orderId)) {
        results[p.i] = { outcome: 'duplicate' };
        continue;
      }
      if (cancelled.has(p.order.orderId)) {
        results[p.i] = { outcome: 'cancelled' };
        continue;
      }
      seen.add(p.order.orderId);
      const unknown = p.lines.filter((l) => !known.has(l.sku)).map((l) => l.sku);
      if (unknown.length > 0) results[p.i] = this.reject(events, p, unknown, 'unknown_sku');
      else candidates.push(p);
    }

    // Every order here gets exactly one event: its saga sequence number is taken before the stock rows are locked.
    const taken = await this.outbox.takeSequences(
      tx,
      inputs
        .filter((p) => results[p.i]?.outcome !== 'duplicate' && results[p.i]?.outcome !== 'cancelled')
        .map((p) => p.order.orderId),
    );
    for (const [saga, numbers] of taken) sequences.set(saga, numbers);
    const toBatch = (ps: typeof inputs): BatchOrder[] =>
      ps.map((p) => ({ orderId: p.order.orderId, lines: p.lines }));
    const decisions = new Map<string, BatchDecision>();
    const first = await holdOrders(
      tx,
      tenantId,
      toBatch(candidates),
      this.config.INVENTORY_RESERVATION_TTL_SECONDS,
    );
    first.forEach((d) => decisions.set(d.orderId, d));
    const short = candidates.filter((p) => !decisions.get(p.order.orderId)!.held);
    if (short.length > 0) {
      // Lazy expiry: holds past their TTL on the short SKUs are released now, then the short orders try again.
      const released = await releaseHeld(tx, {
        tenantId,
        skus: [...new Set(short.flatMap((p) => decisions.get(p.order.orderId)!.shortSkus))],
        reason: 'expired',
        onlyExpired: true,
        skipLocked: true,
      });
      if (released.length > 0) {
        await publishReleased(this.outbox, tx, released, 'expired');
        const second = await holdOrders(
          tx,
          tenantId,
          toBatch(short),
          this.config.INVENTORY_RESERVATION_TTL_SECONDS,
        );
        second.forEach((d) => decisions.set(d.orderId, d));
      }
    }

    for (const p of candidates) {
      const d = decisions.get(p.order.orderId)!;
      results[p.i] = d.held
        ? this.accept(events, p, d.expiresAt!.toISOString())
        : this.reject(events, p, d.shortSkus, 'insufficient_stock');
    }
  }

  private accept(
    events: NewEvent<EventType>[],
    { tenantId, order, cause, lines }: ReserveStockInput & { lines: Line[] },
    expiresAt: string,
  ): ReserveStockResult {
    events.push({
      type: 'inventory.reserved',
      tenantId,
      sagaId: order.orderId,
      cause,
      payload: {
        orderId: order.orderId,
        lines,
        // The order is held as long as its first-expiring line: the deadline payment must meet.
        expiresAt,
        customerId: order.customerId,
        amount: order.total,
        currency: order.currency,
        paymentToken: order.paymentToken,
      },
    });
    return { outcome: 'reserved', lines, expiresAt };
  }

  private reject(
    events: NewEvent<EventType>[],
    { tenantId, order, cause, lines }: ReserveStockInput & { lines: Line[] },
    shortSkus: string[],
    reason: 'unknown_sku' | 'insufficient_stock',
  ): ReserveStockResult {
    events.push({
      type: 'inventory.rejected',
      tenantId,
      sagaId: order.orderId,
      cause,
      payload: { orderId: order.orderId, lines, shortSkus, reason },
    });
    return { outcome: 'rejected', shortSkus, reason };
  }
}
