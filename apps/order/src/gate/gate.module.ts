import { Module } from '@nestjs/common';
import { GateMetrics } from './gate.metrics';
import { OrderStockGate } from './stock-gate.provider';

/** The flash-sale gate (Redis) as the checkout, the catalog and the saga use it. */
@Module({
  providers: [GateMetrics, OrderStockGate],
  exports: [OrderStockGate],
})
export class GateModule {}
