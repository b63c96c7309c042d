import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { InventoryConfig } from '../../config/inventory.config';
import { ExpireReservationsHandler, RepairDriftHandler } from '../commands';
import { pgCode } from '../database/sql';
import { anyReservationDue } from '../database/stock.repository';
import { ReservationMetrics } from '../reservation.metrics';

/** Postgres says a concurrent writer got there first: the next run looks again. */
const TRANSIENT = new Set(['40001', '40P01', '55P03']);

/**
 * The periodic jobs of the inventory service: release expired reservations, and detect and repair counter
 * drift. Each tenant is handled on its own; a run never overlaps the previous one of the same job.
 */
@Injectable()
export class ReservationJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: InventoryConfig,
    private readonly dataSource: DataSource,
    private readonly tenants: TenantRegistry,
    private readonly expire: ExpireReservationsHandler,
    private readonly repair: RepairDriftHandler,
    private readonly metrics: ReservationMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ReservationJobs');
  }

  onApplicationBootstrap(): void {
    this.every('expiry', this.config.INVENTORY_EXPIRY_INTERVAL_MS, () => this.expireAll());
    if (this.config.INVENTORY_DRIFT_INTERVAL_MS > 0)
      this.every('drift', this.config.INVENTORY_DRIFT_INTERVAL_MS, () => this.repairAll());
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    await Promise.allSettled([...this.running]);
  }

  /**
   * Runs one tenant's part of a pass after another; a tenant whose part fails is logged (with its id) and the
   * pass goes on with the next tenant: one tenant's bad row must not stop expiry or repair for all the others.
   */
  private async eachTenant(job: string, part: (tenantId: string) => Promise<void>): Promise<void> {
    for (const { id: tenantId } of this.tenants.all()) {
      if (this.stopped) return;
      try {
        await part(tenantId);
      } catch (error) {
        this.logger.error({ job, tenantId, err: String(error) }, 'periodic job failed for this tenant');
      }
    }
  }

  /** Releases every expired reservation of every tenant, batch by batch. */
  async expireAll(): Promise<number> {
    let total = 0;
    // One cheap look first (the partial index of held reservations): at rest nothing is due, and a pass per
    // tenant would cost a transaction each, every second.
    if (!(await anyReservationDue(this.dataSource))) return 0;
    await this.eachTenant('expiry', async (tenantId) => {
      for (let batch = 0; batch < 20 && !this.stopped; batch += 1) {
        const rows = await this.dataSource.transaction((tx) =>
          this.expire.execute(tx, { tenantId, limit: this.config.INVENTORY_EXPIRY_BATCH_SIZE }),
        );
        if (rows.length > 0) {
          this.metrics.expired.inc({ tenant: tenantId }, rows.length);
          this.logger.info({ tenantId, released: rows.length }, 'expired reservations released');
        }
        total += rows.length;
        if (rows.length < this.config.INVENTORY_EXPIRY_BATCH_SIZE) break;
      }
    });
    return total;
  }

  /** Compares every tenant's counters with the ledgers, logs each drifting SKU and repairs it. */
  async repairAll(): Promise<void> {
    await this.eachTenant('drift', async (tenantId) => {
      const drifts = await this.repair.execute(this.dataSource, { tenantId });
      this.metrics.recordDrift(tenantId, drifts);
      for (const d of drifts) {
        this.logger.warn(
          {
            tenantId,
            sku: d.sku,
            kinds: d.kinds,
            actual: d.actual,
            expected: d.expected,
            repaired: d.repaired,
          },
          d.repaired ? 'stock drift repaired from the ledgers' : 'stock drift detected, not repairable',
        );
      }
    });
  }

  private every(name: string, intervalMs: number, run: () => Promise<unknown>): void {
    const tick = () => {
      const job = run()
        .catch((error: unknown) => {
          if (TRANSIENT.has(pgCode(error) ?? '')) return;
          this.logger.error({ job: name, err: String(error) }, 'job run failed');
        })
        .finally(() => {
          this.running.delete(job);
          if (!this.stopped) this.timers.set(name, setTimeout(tick, intervalMs).unref());
        });
      this.running.add(job);
    };
    this.timers.set(name, setTimeout(tick, intervalMs).unref());
  }
}
