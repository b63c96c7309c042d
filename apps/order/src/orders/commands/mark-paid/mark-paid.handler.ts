import { Inject, Injectable } from '@nestjs/common';
import { SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { OrderRepository } from '../../database/order.repository';
import { pricedSnapshot } from '../../domain/order-snapshot';
import { SAGA_GATE, SagaGate, SagaStep } from '../saga-step';

/**
 * MarkPaid (after payment.succeeded or inventory.committed): PAID needs both the money and the stock, in either
 * order; the move publishes order.paid with the order's snapshot, and the gate's hold is settled after commit.
 */
@Injectable()
export class MarkPaidHandler {
  constructor(
    private readonly orders: OrderRepository,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(SAGA_GATE) private readonly gate: SagaGate,
  ) {}

  /**
   * inventory.committed: the stock half of PAID is recorded, then the order moves if the money is there too (the
   * update says so; the order's saga lock keeps payment.succeeded from landing in between).
   */
  async onStockCommitted(step: SagaStep, e: SagaEvent<'inventory.committed'>): Promise<void> {
    if ((await this.orders.markStockCommitted(step.tx, e.tenantId, e.sagaId)) === false) return;
    await this.execute(step, e);
  }

  async execute(step: SagaStep, e: SagaEvent): Promise<void> {
    const { tx } = step;
    const moved = await this.orders.transition(tx, e.tenantId, e.sagaId, 'PAID', e.type, e.eventId);
    if (!moved) return;
    const order = (await this.orders.find(tx, e.tenantId, e.sagaId))!;
    await this.outbox.append(tx, {
      type: 'order.paid',
      tenantId: e.tenantId,
      sagaId: e.sagaId,
      cause: e,
      payload: {
        orderId: order.id,
        tenantId: order.tenantId,
        ...pricedSnapshot(order),
        paymentId: order.paymentId!,
        pspReference: order.pspReference,
        paidAt: order.paidAt!,
      },
    });
    step.afterCommit(() => this.gate.settle(e.tenantId, moved.gateHoldId));
  }
}
