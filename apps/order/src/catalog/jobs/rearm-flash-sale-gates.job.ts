import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { OrderConfig } from '../../config/order.config';
import { OrderStockGate } from '../../gate/stock-gate.provider';
import { CatalogMetrics } from '../catalog.metrics';
import { MarkAnsweredCheckoutsHandler } from '../commands/mark-answered-checkouts/mark-answered-checkouts.handler';
import { CatalogRepository, EnabledFlashSale } from '../database/catalog.repository';

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
    private readonly markAnswered: MarkAnsweredCheckoutsHandler,
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
    const tenantIds = this.tenants.all().map((t) => t.id);
    try {
      if (!(await this.markAnswered.markUnmarked(tenantIds))) {
        report.gateUnavailable = true;
        return report; // Redis is down: the reconnect runs the pass again
      }
    } catch (error) {
      this.logger.error({ err: String(error) }, 'checkouts answered while Redis was away could not be read');
    }
    for (const tenantId of tenantIds) {
      let sales: EnabledFlashSale[];
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
      for (const sale of sales) {
        const { sku } = sale;
        let r: Awaited<ReturnType<typeof this.rearm>>;
        try {
          r = await this.rearm(tenantId, sale);
        } catch (error) {
          report.failedTenants.push(tenantId);
          this.logger.error(
            { tenantId, sku, err: String(error) },
            'answered checkouts or units left could not be read: gate not re-armed',
          );
          break;
        }
        if (r.outcome === 'GateUnavailable') {
          report.gateUnavailable = true;
          return report; // Redis is down: the reconnect runs the pass again
        }
        if (r.outcome === 'Rearmed') {
          report.rearmed.push({ tenantId, sku, units: r.units });
          this.metrics.rearmedTotal.inc({ tenant: tenantId });
          this.logger.warn(
            { tenantId, sku, units: r.units },
            'flash-sale gate counter was lost (Redis restarted?): re-armed from the order database',
          );
        }
      }
    }
    return report;
  }

  /**
   * Re-arms one lost counter: the SKU's answered checkouts are marked at the gate first (Redis lost those marks
   * with the counter), so that no retry of them reads OUT_OF_STOCK once the gate is on again. A gate turned on
   * lately has its answers marked again on every pass for a lease and two intervals: a checkout that passed it
   * as not gated just before may have been answered after SetFlashSale marked them.
   */
  private async rearm(tenantId: string, { sku, enabledForMs }: EnabledFlashSale) {
    const counter = await this.gate.gate.remaining(tenantId, sku);
    if (typeof counter === 'object' && counter !== null) return counter;
    const lately =
      enabledForMs < this.config.IDEMPOTENCY_LEASE_MS + 2 * this.config.ORDER_GATE_REARM_INTERVAL_MS;
    if (counter !== null && !lately) return { outcome: 'AlreadyOn' } as const;
    const marked = await this.markAnswered.execute(tenantId, { sku });
    if (typeof marked !== 'number') return marked;
    if (counter !== null) return { outcome: 'AlreadyOn' } as const;
    const units = await this.catalog.flashSaleUnitsLeft(this.dataSource, tenantId, sku);
    if (units === null) return { outcome: 'TurnedOff' } as const; // turned off meanwhile: nothing to re-arm
    const r = await this.gate.gate.rearm(tenantId, sku, units);
    return r.outcome === 'Rearmed' ? ({ outcome: 'Rearmed', units } as const) : r;
  }
}
