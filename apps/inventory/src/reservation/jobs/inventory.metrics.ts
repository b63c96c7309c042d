import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { TenantRegistry } from '@checkout/service-kit';
import { Drift } from '../commands';

/** The inventory service's own metrics; the overdue gauges read the database at scrape time. */
export class InventoryMetrics {
  /** Reservations released by the expiry job (and lazy expiry), by tenant. */
  readonly expired: Counter<'tenant'>;
  /** SKUs found drifting in the last drift run, by tenant and kind. */
  readonly driftSkus: Gauge<'tenant' | 'kind'>;
  /** SKUs whose counters were rewritten from the ledgers. */
  readonly driftRepaired: Counter<'tenant'>;
  /** Hot-SKU gate counters the re-sync found different from the database and reset. */
  readonly gateCorrections: Counter<'tenant'>;

  constructor(registry: Registry, dataSource: DataSource, tenants: TenantRegistry) {
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
      pending ??= readOverdue(dataSource, tenants)
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

async function readOverdue(ds: DataSource, tenants: TenantRegistry) {
  const rows: { tenant_id: string; count: number; oldest: number }[] = await ds.query(
    `SELECT tenant_id, count(*)::int AS count, EXTRACT(EPOCH FROM now() - min(expires_at))::float8 AS oldest
       FROM reservation
      WHERE tenant_id = ANY($1) AND status = 'held' AND expires_at < now()
      GROUP BY tenant_id`,
    [tenants.all().map((t) => t.id)],
  );
  return new Map(rows.map((r) => [r.tenant_id, { count: r.count, oldestSeconds: r.oldest }]));
}
