import { Inject, Injectable } from '@nestjs/common';
import { SagaEvent } from '@checkout/contracts';
import { ReturnVoucherHandler } from '../../../catalog/commands/return-voucher/return-voucher.handler';
import { Moved, OrderRepository } from '../../database/order.repository';
import { SAGA_GATE, SagaGate, SagaStep } from '../saga-step';

/**
 * UndoCheckout: the compensation of PlaceOrder when the order ends REJECTED or CANCELLED by the saga. The voucher
 * redemption is returned in the event's transaction; the gate's units go back to Redis after it commits (a
 * rolled-back transaction gives nothing back; the gate gives a hold back once).
 */
@Injectable()
export class UndoCheckoutHandler {
  constructor(
    private readonly returnVoucher: ReturnVoucherHandler,
    private readonly orders: OrderRepository,
    @Inject(SAGA_GATE) private readonly gate: SagaGate,
  ) {}

  async execute(step: SagaStep, e: SagaEvent, moved: Moved): Promise<void> {
    await this.returnVoucher.execute(step.tx, e.tenantId, e.sagaId);
    this.returnUnits(step, e.tenantId, moved.gateHoldId, e.type);
  }

  /** inventory.released (expired, or released after a failure): the gate gets the order's units back, once. */
  async onStockReleased(step: SagaStep, e: SagaEvent<'inventory.released'>): Promise<void> {
    const holdId = await this.orders.gateHoldOf(step.tx, e.tenantId, e.sagaId);
    if (holdId !== undefined) this.returnUnits(step, e.tenantId, holdId, `${e.type}:${e.payload.reason}`);
  }

  /** The gate's units of the order's hold back, after commit (inventory released or expired the reservation). */
  returnUnits(step: SagaStep, tenantId: string, holdId: string | null, why: string): void {
    step.afterCommit(() => this.gate.giveBack(tenantId, holdId, why));
  }
}
