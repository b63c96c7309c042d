import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter, lockSaga } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { InventoryError, Line, PaymentDecision, SettledLine, decidePayment } from '../../domain';
import {
  PaymentOutcome,
  insertBackorders,
  lockOrderReservations,
  reservedToSold,
  stampPaymentOutcome,
  stockFlags,
  takeIntoSold,
} from '../../database/stock.repository';
import { withSavepoint } from '../../database/sql';
import { recordOutcome } from '../../reservation.metrics';

/** Input of CommitStockHandler: the order whose payment succeeded. */
export interface CommitStockInput {
  tenantId: string;
  orderId: string;
  cause?: SagaEvent;
}

/** What CommitStockHandler did. */
export type CommitStockResult =
  | PaymentDecision
  | { kind: 'duplicate' }
  | { kind: 'no_reservation' }
  | { kind: 'order_closed'; reason: 'order_cancelled' | 'payment_failed' };

/**
 * CommitStockHandler on payment.succeeded: held lines move from reserved to sold. Lines the TTL already released
 * follow the seed's policy: re-reserve with a conditional update, else backorder when the SKU allows it,
 * else nothing is sold and inventory.unavailable-after-payment tells the saga to refund. The decision is
 * recorded on the reservation rows, so a duplicate payment.succeeded changes nothing. A payment for an order
 * released because it was cancelled or its payment failed sells nothing (`order_closed`).
 */
@Injectable()
export class CommitStockHandler {
  constructor(@Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter) {}

  /**
   * payment.succeeded, under the order's lock. Payment only charges after inventory.reserved: money for an order
   * inventory never held is parked (INVENTORY.NO_RESERVATION) for SREs to see.
   */
  async onPaymentSucceeded(
    tx: EntityManager,
    event: SagaEvent<'payment.succeeded'>,
  ): Promise<CommitStockResult> {
    const { tenantId } = event;
    const { orderId } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    const result = await this.execute(tx, { tenantId, orderId, cause: event });
    if (result.kind === 'no_reservation')
      throw new InventoryError('INVENTORY.NO_RESERVATION', `no reservation for paid order ${orderId}`);
    return result;
  }

  async execute(
    tx: EntityManager,
    { tenantId, orderId, cause }: CommitStockInput,
  ): Promise<CommitStockResult> {
    // The order's own rows, locked in SKU order: a concurrent release or expiry of this order waits or skips.
    const rows = await lockOrderReservations(tx, tenantId, orderId);
    if (rows.length === 0) return { kind: 'no_reservation' };
    if (rows.some((r) => r.paymentOutcome !== null)) return { kind: 'duplicate' };
    // Only the TTL's release is undone by a late payment. An order the customer cancelled (or whose payment
    // failed) is closed: its units may already be someone else's, and payment refunds the money it took.
    const closedBy = rows.find(
      (r) => r.releaseReason === 'order_cancelled' || r.releaseReason === 'payment_failed',
    );
    if (closedBy)
      return {
        kind: 'order_closed',
        reason: closedBy.releaseReason as 'order_cancelled' | 'payment_failed',
      };

    const released = rows.filter((r) => r.status === 'released').map((r) => r.sku);
    const flags = released.length > 0 ? await stockFlags(tx, tenantId, released) : new Map();
    const settle = async () => {
      const lines: SettledLine[] = [];
      for (const r of rows) {
        const line = { sku: r.sku, quantity: r.qty };
        const allowBackorder = flags.get(r.sku)?.allowBackorder ?? false;
        if (r.status === 'held') {
          await reservedToSold(tx, tenantId, line);
          lines.push({ ...line, result: 'committed', allowBackorder });
        } else {
          const taken = await takeIntoSold(tx, tenantId, line);
          lines.push({ ...line, result: taken ? 're_reserved' : 'short', allowBackorder });
        }
      }
      const decision = decidePayment(lines);
      return { keep: decision.kind !== 'unavailable', value: { lines, decision } };
    };
    // Held lines only move from reserved to sold, which cannot come back short: the savepoint (undone when a
    // released line cannot be taken again) is needed only when the TTL released a line.
    const settled = rows.every((r) => r.status === 'held')
      ? (await settle()).value
      : await withSavepoint(tx, 'settle_payment', settle);

    const { lines, decision } = settled;
    const all: Line[] = lines.map(({ sku, quantity }) => ({ sku, quantity }));
    if (decision.kind === 'unavailable') {
      await stampPaymentOutcome(
        tx,
        tenantId,
        orderId,
        all.map(({ sku }) => ({ sku, outcome: 'unavailable' })),
      );
      await this.outbox.append(tx, {
        type: 'inventory.unavailable-after-payment',
        tenantId,
        sagaId: orderId,
        cause,
        payload: { orderId, lines: all, shortSkus: decision.shortSkus },
      });
      recordOutcome(tx, tenantId, 'unavailable_after_payment');
      return decision;
    }

    await stampPaymentOutcome(
      tx,
      tenantId,
      orderId,
      lines.map(({ sku, result }): { sku: string; outcome: PaymentOutcome } => ({
        sku,
        outcome: result === 'short' ? 'backordered' : result,
      })),
    );
    if (decision.kind === 'backordered') {
      await insertBackorders(tx, tenantId, orderId, decision.backordered);
      await this.outbox.append(tx, {
        type: 'inventory.backordered',
        tenantId,
        sagaId: orderId,
        cause,
        payload: { orderId, lines: decision.backordered },
      });
      recordOutcome(tx, tenantId, 'backordered');
      return decision;
    }
    await this.outbox.append(tx, {
      type: 'inventory.committed',
      tenantId,
      sagaId: orderId,
      cause,
      payload: { orderId, lines: all, reReserved: decision.reReserved },
    });
    recordOutcome(tx, tenantId, 'committed', decision.reReserved ? 're_reserved' : 'held');
    return decision;
  }
}
