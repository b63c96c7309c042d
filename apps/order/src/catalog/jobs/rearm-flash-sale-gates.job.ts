import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { OrderConfig } from '../../config/order.config';
import { OrderStockGate } from '../../gate/stock-gate.provider';
import { CatalogMetrics } from '../catalog.metrics';
import { CatalogRepository } from '../database/catalog.repository';

/** One gate this job turned back on. */
export interface RearmedGate {
  tenantId: string;
  sku: string;
  units: number;
}

/** What one pass did: the gates re-armed, and the tenants it could not look at (the others still ran). */
export interface RearmReport {
  rearmed: RearmedGate[];
  failedTenants: string[];
  /** Redis could not be asked: nothing re-armed, the next pass (or reconnect) tries again. */
  gateUnavailable: boolean;
}

/**
 * Re-arms the flash-sale gates whose Redis counters were lost (docs/design/order-checkout.md, Re-arming the
 * gates).
 */
@Injectable()
export class RearmFlashSaleGatesJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: CatalogRepository,
    private readonly gate: OrderStockGate,
    private readonly tenants: TenantRegistry,
    @Inject(SERVICE_CONFIG) private readonly config: OrderConfig,
    private readonly metrics: CatalogMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('RearmFlashSaleGates');
    this.task = new PeriodicTask(
      'rearm-flash-sale-gates',
      config.ORDER_GATE_REARM_INTERVAL_MS,
      () => this.runOnce(),
      logger.logger,
    );
  }

  onApplicationBootstrap(): void {
    if (this.config.ORDER_GATE_REARM_INTERVAL_MS === 0) return;
    this.gate.gate.onReconnect(() => void this.task.runOnce());
    this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One pass over every tenant; one tenant's failure is logged and the pass goes on with the next. */
  async runOnce(): Promise<RearmReport> {
    const report: RearmReport = { rearmed: [], failedTenants: [], gateUnavailable: false };
    for (const { id: tenantId } of this.tenants.all()) {
      let sales: { sku: string; unitsLeft: number }[];
      try {
        sales = await this.catalog.enabledFlashSales(this.dataSource, tenantId);
      } catch (error) {
        report.failedTenants.push(tenantId);
        this.logger.error(
          { tenantId, err: String(error) },
          'flash sales could not be read: gates not re-armed',
        );
        continue;
      }
      for (const { sku, unitsLeft } of sales) {
        const r = await this.gate.gate.rearm(tenantId, sku, unitsLeft);
        if (r.outcome === 'GateUnavailable') {
          report.gateUnavailable = true;
          return report; // Redis is down: the reconnect runs the pass again
        }
        if (r.outcome === 'Rearmed') {
          report.rearmed.push({ tenantId, sku, units: unitsLeft });
          this.metrics.rearmedTotal.inc({ tenant: tenantId });
          this.logger.warn(
            { tenantId, sku, units: unitsLeft },
            'flash-sale gate counter was lost (Redis restarted?): re-armed from the order database',
          );
        }
      }
    }
    return report;
  }
}
