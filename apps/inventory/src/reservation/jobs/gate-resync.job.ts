import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { FAIL_FAST_REDIS, GateResyncReport, StockGate, redisAuthOf, resyncGates } from '@checkout/stock-gate';
import { InventoryConfig } from '../../config/inventory.config';
import { sellableUnits } from '../database/stock.repository';
import { ReservationMetrics } from '../reservation.metrics';

/** What one run of the gate re-sync did. */
export type GateResyncRun = GateResyncReport | { outcome: 'Skipped'; reason: string };

/**
 * The periodic gate re-sync (issue 3 item 5): every gated SKU's Redis counter is reset from the database's
 * sellable units, the database always wins: lowered at once, raised once the counter stood still for a run
 * (see resyncGates for tokens in flight and why the re-sync cannot oversell).
 * Redis down or not configured: the run is logged and skipped; checkouts fall back to the database anyway.
 */
@Injectable()
export class GateResyncJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly redis?: Redis;
  private readonly gate?: StockGate;
  private readonly task: PeriodicTask;
  /** Each counter as the previous run left it: a counter below the database is raised once it stood still. */
  private readonly lastSeen = new Map<string, string>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: InventoryConfig,
    private readonly dataSource: DataSource,
    private readonly tenants: TenantRegistry,
    private readonly metrics: ReservationMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('GateResyncJob');
    if (config.REDIS_URL) {
      this.redis = new Redis(config.REDIS_URL, {
        ...FAIL_FAST_REDIS,
        ...redisAuthOf(config),
        lazyConnect: true,
      });
      this.redis.on('error', () => undefined); // reported per run as skipped
      this.gate = new StockGate(this.redis);
    }
    this.task = new PeriodicTask(
      'gate-resync',
      config.INVENTORY_GATE_RESYNC_INTERVAL_MS,
      () => this.runOnce(),
      logger.logger,
    );
  }

  onApplicationBootstrap(): void {
    if (!this.redis || this.config.INVENTORY_GATE_RESYNC_INTERVAL_MS === 0) return;
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
    this.redis?.disconnect();
  }

  /** One re-sync of every tenant's gated SKUs; logs each corrected counter. */
  async runOnce(): Promise<GateResyncRun> {
    if (!this.redis || !this.gate) return { outcome: 'Skipped', reason: 'REDIS_URL is not set' };
    if (this.redis.status === 'wait') this.redis.connect().catch(() => undefined);
    await this.gate.ready(2_000);
    const report = await resyncGates({
      gate: this.gate,
      redis: this.redis,
      tenantIds: this.tenants.all().map((t) => t.id),
      lastSeen: this.lastSeen,
      availableOf: (tenantId, skus) => this.dataSource.transaction((tx) => sellableUnits(tx, tenantId, skus)),
    });
    if (report.outcome === 'GateUnavailable') {
      this.logger.warn({ reason: report.reason }, 'stock gate unavailable: re-sync skipped');
      return { outcome: 'Skipped', reason: report.reason };
    }
    for (const c of report.corrections) {
      this.metrics.gateCorrections.inc({ tenant: c.tenantId });
      this.logger.info(c, 'stock gate counter reset from the database');
    }
    return report;
  }
}
