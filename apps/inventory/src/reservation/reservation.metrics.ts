import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { METRICS_REGISTRY, TenantRegistry } from '@checkout/service-kit';
import type { Drift } from './commands';
import { overdueHolds } from './database/stock.repository';

/** What happened to a reservation (an order's stock), as counted on /metrics. */
export type ReservationOutcome =
  'reserved' | 'rejected' | 'released' | 'committed' | 'backordered' | 'unavailable_after_payment';

interface PendingOutcome {
  tenant: string;
  outcome: ReservationOutcome;
  reason: string;
}

const PENDING = 'reservationOutcomes';

/**
 * Notes an outcome in the transaction that decides it; it is counted only once that transaction commits, so
 * an attempt rolled back and retried (deadlock, lost connection, a batch split after a poison event) is
 * counted once. Without ReservationMetrics on the DataSource (specs, benchmarks) it counts nothing.
 */
export function recordOutcome(
  tx: EntityManager,
  tenant: string,
  outcome: ReservationOutcome,
  reason = 'none',
  times = 1,
): void {
  const data = tx.queryRunner?.data as Record<string, PendingOutcome[] | undefined> | undefined;
  if (!data) return;
  const pending = (data[PENDING] ??= []);
  for (let i = 0; i < times; i += 1) pending.push({ tenant, outcome, reason });
}

/**
 * The inventory service's own metrics; the overdue gauges read the database at scrape time, and the outcomes
 * counter is a subscriber of the DataSource's transactions (it counts what recordOutcome noted once they commit).
 */
@Injectable()
export class ReservationMetrics implements EntitySubscriberInterface {
  /** Reservations released by the expiry job (and lazy expiry), by tenant. */
  readonly expired: Counter<'tenant'>;
  /** SKUs found drifting in the last drift run, by tenant and kind. */
  readonly driftSkus: Gauge<'tenant' | 'kind'>;
  /** SKUs whose counters were rewritten from the ledgers. */
  readonly driftRepaired: Counter<'tenant'>;
  /** Hot-SKU gate counters the re-sync found different from the database and reset. */
  readonly gateCorrections: Counter<'tenant'>;
  /**
   * `inventory_reservation_outcomes_total{tenant, outcome, reason}`: reserved, rejected (insufficient_stock,
   * unknown_sku), released (payment_failed, order_cancelled, expired), committed (held, re_reserved,
   * backorder_filled), backordered, unavailable_after_payment. One per order and outcome.
   */
  readonly outcomes: Counter<'tenant' | 'outcome' | 'reason'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry, dataSource: DataSource, tenants: TenantRegistry) {
    this.expired = new Counter({
      name: 'inventory_reservations_expired_total',
      help: 'Held reservations released because their TTL passed',
      labelNames: ['tenant'],
      registers: [registry],
    });
    this.driftSkus = new Gauge({
      name: 'inventory_stock_drift_skus',
      help: 'SKUs whose counters disagreed with the reservation and restock ledgers in the last drift run',
      labelNames: ['tenant', 'kind'],
      registers: [registry],
    });
    this.driftRepaired = new Counter({
      name: 'inventory_stock_drift_repaired_total',
      help: 'SKUs whose counters the drift job rewrote from the ledgers',
      labelNames: ['tenant'],
      registers: [registry],
    });
    this.gateCorrections = new Counter({
      name: 'inventory_gate_resync_corrections_total',
      help: 'Hot-SKU gate counters the re-sync found different from the database and reset to it',
      labelNames: ['tenant'],
      registers: [registry],
    });
    let pending: Promise<void> | null = null;
    const refresh = (): Promise<void> => {
      pending ??= overdueHolds(
        dataSource,
        tenants.all().map((t) => t.id),
      )
        .then((rows) => {
          for (const t of tenants.all()) {
            const row = rows.get(t.id);
            overdue.set({ tenant: t.id }, row?.count ?? 0);
            oldest.set({ tenant: t.id }, row?.oldestSeconds ?? 0);
          }
        })
        .catch(() => undefined) // a scrape while the DB is away keeps the last values
        .finally(() => (pending = null));
      return pending;
    };
    const overdue = new Gauge({
      name: 'inventory_reservations_overdue_held',
      help: 'Held reservations past expires_at: growing means the release job is dead',
      labelNames: ['tenant'],
      registers: [registry],
      collect: refresh,
    });
    const oldest = new Gauge({
      name: 'inventory_reservations_overdue_oldest_seconds',
      help: 'Age past expires_at of the oldest held reservation',
      labelNames: ['tenant'],
      registers: [registry],
      collect: refresh,
    });
    this.outcomes = new Counter({
      name: 'inventory_reservation_outcomes_total',
      help: 'Reservation outcomes by kind and reason, counted when the transaction that decided them commits',
      labelNames: ['tenant', 'outcome', 'reason'],
      registers: [registry],
    });
    if (!dataSource.subscribers.includes(this)) dataSource.subscribers.push(this);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint released: the transaction goes on
    const data = event.queryRunner.data as Record<string, PendingOutcome[] | undefined>;
    for (const o of data[PENDING] ?? [])
      this.outcomes.inc({ tenant: o.tenant, outcome: o.outcome, reason: o.reason });
    data[PENDING] = undefined;
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (event.queryRunner.isTransactionActive) return;
    (event.queryRunner.data as Record<string, unknown>)[PENDING] = undefined;
  }

  /** Records the result of one drift run of a tenant. */
  recordDrift(tenantId: string, drifts: Drift[]): void {
    for (const kind of ['reserved', 'sold', 'available', 'conservation'] as const) {
      this.driftSkus.set({ tenant: tenantId, kind }, drifts.filter((d) => d.kinds.includes(kind)).length);
    }
    const repaired = drifts.filter((d) => d.repaired).length;
    if (repaired > 0) this.driftRepaired.inc({ tenant: tenantId }, repaired);
  }
}
