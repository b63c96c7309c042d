import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { NextDue, PeriodicTask, SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { InventoryConfig } from '../../config/inventory.config';
import { ExpireReservationsHandler, RepairDriftHandler } from '../commands';
import { pgCode } from '../database/sql';
import { nextReservationDueMs } from '../database/stock.repository';
import { ReservationExpiryAlarm } from '../expiry-alarm';
import { ReservationMetrics } from '../reservation.metrics';

/** Postgres says a concurrent writer got there first: the next run looks again. */
const TRANSIENT = new Set(['40001', '40P01', '55P03']);

/**
 * The periodic jobs of the inventory service: release expired reservations, and detect and repair counter
 * drift. Each tenant is handled on its own; a run never overlaps the previous one of the same job. Expiry sleeps
 * until the earliest held reservation expires (the reserve command says when it holds new ones), and at most
 * INVENTORY_EXPIRY_INTERVAL_MS (what another replica held).
 */
@Injectable()
export class ReservationJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly expiry: PeriodicTask;
  private readonly drift?: PeriodicTask;
  private stopped = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: InventoryConfig,
    private readonly dataSource: DataSource,
    private readonly tenants: TenantRegistry,
    private readonly expire: ExpireReservationsHandler,
    private readonly repair: RepairDriftHandler,
    private readonly metrics: ReservationMetrics,
    private readonly logger: PinoLogger,
    alarm: ReservationExpiryAlarm,
  ) {
    logger.setContext('ReservationJobs');
    this.expiry = new PeriodicTask(
      'expiry',
      config.INVENTORY_EXPIRY_INTERVAL_MS,
      () => this.expireDue(),
      logger,
    );
    if (config.INVENTORY_DRIFT_INTERVAL_MS > 0)
      this.drift = new PeriodicTask(
        'drift',
        config.INVENTORY_DRIFT_INTERVAL_MS,
        () => this.transient(this.repairAll()),
        logger,
      );
    alarm.listen((at) => this.expiry.dueIn(at.getTime() - Date.now()));
  }

  onApplicationBootstrap(): void {
    this.expiry.start();
    // What a previous run left held: a first pass now says when it falls due.
    this.expiry.dueIn(0);
    this.drift?.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.expiry.stop(), this.drift?.stop()]);
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

  /**
   * One expiry pass when something is due; says when the next held reservation falls due. A pass that released
   * nothing while rows stayed due (a tenant's part failing, logged) waits the interval, not the due time.
   */
  async expireDue(): Promise<NextDue> {
    const tenantIds = this.tenants.all().map((t) => t.id);
    const due = await nextReservationDueMs(this.dataSource, tenantIds);
    if (due === null || due > 0) return { dueInMs: due };
    const released = await this.transient(this.expireAll());
    const next = await nextReservationDueMs(this.dataSource, tenantIds);
    const stuck = !released && next !== null && next <= 0;
    return { dueInMs: stuck ? this.config.INVENTORY_EXPIRY_INTERVAL_MS : next };
  }

  /** Releases every expired reservation of every tenant, batch by batch. */
  async expireAll(): Promise<number> {
    let total = 0;
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

  /** Postgres says a concurrent writer got there first: not a failure, the next pass looks again. */
  private async transient<T>(run: Promise<T>): Promise<T | undefined> {
    try {
      return await run;
    } catch (error) {
      if (TRANSIENT.has(pgCode(error) ?? '')) return undefined;
      throw error;
    }
  }
}
