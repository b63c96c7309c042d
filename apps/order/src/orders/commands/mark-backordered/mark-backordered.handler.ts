import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { OrderRepository } from '../../database/order.repository';
import { SAGA_GATE, SagaGate, SagaStep, moveOrder } from '../saga-step';

/** MarkBackordered (inventory.backordered): paid, the stock follows later; the gate's hold is settled after commit. */
@Injectable()
export class MarkBackorderedHandler {
  constructor(
    private readonly orders: OrderRepository,
    @Inject(SAGA_GATE) private readonly gate: SagaGate,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'inventory.backordered'>): Promise<void> {
    const moved = await moveOrder(this.orders, this.logger, step.tx, e, 'BACKORDERED');
    if (moved) step.afterCommit(() => this.gate.settle(e.tenantId, moved.gateHoldId));
  }
}
