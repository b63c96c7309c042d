import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@checkout/service-kit';

/** The catalog's metrics: flash-sale gates re-armed. */
@Injectable()
export class CatalogMetrics {
  readonly rearmedTotal: Counter<'tenant'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.rearmedTotal = new Counter({
      name: 'order_stock_gate_rearmed_total',
      help: 'Flash-sale gates turned back on after their Redis counter was lost',
      labelNames: ['tenant'],
      registers: [registry],
    });
  }
}
