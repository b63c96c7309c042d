import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter, lockSaga } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { Line, compareSku } from '../../domain';
import { ReleaseReason, ReleasedRow, releaseHeld } from '../../database/stock.repository';
import { recordOutcome } from '../../reservation.metrics';

/** Input of ReleaseStockHandler: one order's held reservations and why they go back. */
export interface ReleaseStockInput {
  tenantId: string;
  orderId: string;
  reason: Exclude<ReleaseReason, 'expired'>;
  cause?: SagaEvent;
}

/** Writes one inventory.released per order of the released rows, inside the release's transaction. */
export async function publishReleased(
  outbox: OutboxWriter,
  tx: EntityManager,
  rows: ReleasedRow[],
  reason: ReleaseReason,
  cause?: SagaEvent,
): Promise<void> {
  const byOrder = new Map<string, { tenantId: string; lines: Line[] }>();
  for (const r of rows) {
    const entry = byOrder.get(r.orderId) ?? { tenantId: r.tenantId, lines: [] };
    entry.lines.push({ sku: r.sku, quantity: r.qty });
    byOrder.set(r.orderId, entry);
  }
  for (const [orderId, { tenantId, lines }] of byOrder) {
    recordOutcome(tx, tenantId, 'released', reason);
    await outbox.append(tx, {
      type: 'inventory.released',
      tenantId,
      sagaId: orderId,
      cause,
      payload: { orderId, lines: lines.sort((a, b) => compareSku(a.sku, b.sku)), reason },
    });
  }
}

/**
 * ReleaseStockHandler, the compensation of ReserveStock: an order's held reservations go back to available
 * (payment failed, order cancelled). Idempotent: only held rows move; nothing held, nothing happens.
 */
@Injectable()
export class ReleaseStockHandler {
  constructor(@Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter) {}

  /** payment.failed, under the order's lock: its held lines go back (inventory.released, reason payment_failed). */
  async onPaymentFailed(tx: EntityManager, event: SagaEvent<'payment.failed'>): Promise<Line[]> {
    const { tenantId } = event;
    const { orderId } = event.payload;
    await lockSaga(tx, tenantId, orderId);
    return this.execute(tx, { tenantId, orderId, reason: 'payment_failed', cause: event });
  }

  async execute(tx: EntityManager, { tenantId, orderId, reason, cause }: ReleaseStockInput): Promise<Line[]> {
    const rows = await releaseHeld(tx, { tenantId, orderId, reason, onlyExpired: false, skipLocked: false });
    await publishReleased(this.outbox, tx, rows, reason, cause);
    return rows.map((r) => ({ sku: r.sku, quantity: r.qty }));
  }
}
