import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@checkout/service-kit';

/** The flash-sale gate's metrics: calls that found Redis away, and takes without a reply. */
@Injectable()
export class GateMetrics {
  readonly unavailable: Counter<'operation'>;
  readonly unknown: Counter<'resolution'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.unavailable = new Counter({
      name: 'order_stock_gate_unavailable_total',
      help: 'Gate calls that could not reach Redis (for take: the checkout fell back to the database path)',
      labelNames: ['operation'],
      registers: [registry],
    });
    this.unknown = new Counter({
      name: 'order_stock_gate_unknown_takes_total',
      help: 'Takes sent to Redis without a reply in time (checkout answered 503), by how the hold was settled',
      labelNames: ['resolution'],
      registers: [registry],
    });
  }
}
