import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY } from '@checkout/service-kit';
import type { CreateShipmentOutcome } from './commands';
import { shipmentCounts } from './database/shipment.repository';

/** The shipping area's metrics; the shipments gauge reads the database at scrape time. */
@Injectable()
export class ShippingMetrics {
  /** Decisions of the shipment commands, by outcome (a retried handler may count twice; the gauge does not). */
  private readonly decisions: Counter<'outcome'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry, dataSource: DataSource) {
    this.decisions = new Counter({
      name: 'fulfillment_shipment_decisions_total',
      help: 'order.paid / payment.refunded handled, by outcome (created, failed, cancelled, duplicate, skipped_refunded)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    let pending: Promise<void> | null = null;
    const refresh = (): Promise<void> => {
      pending ??= shipmentCounts(dataSource)
        .then((rows) => {
          shipments.reset();
          for (const r of rows) shipments.set({ tenant: r.tenantId, status: r.status }, r.count);
        })
        .catch(() => undefined) // a scrape while the DB is away keeps the last values
        .finally(() => (pending = null));
      return pending;
    };
    const shipments = new Gauge({
      name: 'fulfillment_shipments',
      help: 'Shipments by tenant and outcome (created, failed, cancelled)',
      labelNames: ['tenant', 'status'],
      registers: [registry],
      collect: refresh,
    });
  }

  /** Counts one shipment decision. */
  shipmentDecided(outcome: CreateShipmentOutcome | 'cancelled'): void {
    this.decisions.inc({ outcome });
  }
}
