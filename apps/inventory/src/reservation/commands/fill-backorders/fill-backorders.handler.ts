import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { compareSku } from '../../domain';
import { fillBackorders, fulfilledBackorders } from '../../database/stock.repository';
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
    const filled = await fillBackorders(tx, tenantId, sku);
    if (filled.length === 0) return { filled: [], completedOrders: [] };
    const completed = await fulfilledBackorders(
      tx,
      tenantId,
      filled.map((f) => f.orderId),
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
      filled,
      completedOrders: completed.map((c) => c.orderId),
    };
  }
}
