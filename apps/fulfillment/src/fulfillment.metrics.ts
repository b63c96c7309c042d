import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { NotificationKind } from './notifications/domain';
import { CreateShipmentOutcome } from './shipping/commands';

/** The fulfillment service's own metrics; the state gauges read the database at scrape time. */
export class FulfillmentMetrics {
  /** Decisions of the shipment commands, by outcome (a retried handler may count twice; the gauges do not). */
  private readonly decisions: Counter<'outcome'>;
  /** Emails the notifier recorded as sent, by kind. */
  private readonly sent: Counter<'kind'>;

  constructor(registry: Registry, dataSource: DataSource) {
    this.decisions = new Counter({
      name: 'fulfillment_shipment_decisions_total',
      help: 'order.paid / payment.refunded handled, by outcome (created, failed, cancelled, duplicate, skipped_refunded)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.sent = new Counter({
      name: 'fulfillment_notifications_sent_total',
      help: 'Customer notifications the notifier step recorded as sent, by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
    let pending: Promise<void> | null = null;
    const refresh = (): Promise<void> => {
      pending ??= readState(dataSource)
        .then(({ shipments: s, notifications: n }) => {
          shipments.reset();
          for (const r of s) shipments.set({ tenant: r.tenant_id, status: r.status }, r.count);
          notifications.reset();
          for (const r of n)
            notifications.set({ tenant: r.tenant_id, kind: r.kind, status: r.status }, r.count);
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
    const notifications = new Gauge({
      name: 'fulfillment_notifications',
      help: 'Customer notifications by tenant, kind and status (pending, sent): a growing pending count means the notifier is stuck',
      labelNames: ['tenant', 'kind', 'status'],
      registers: [registry],
      collect: refresh,
    });
  }

  /** Counts one shipment decision. */
  shipmentDecided(outcome: CreateShipmentOutcome | 'cancelled'): void {
    this.decisions.inc({ outcome });
  }

  /** Counts one email recorded as sent. */
  notificationSent(kind: NotificationKind): void {
    this.sent.inc({ kind });
  }
}

async function readState(ds: DataSource) {
  const shipments: { tenant_id: string; status: string; count: number }[] = await ds.query(
    `SELECT tenant_id, status, count(*)::int AS count FROM shipment GROUP BY tenant_id, status`,
  );
  const notifications: { tenant_id: string; kind: string; status: string; count: number }[] = await ds.query(
    `SELECT tenant_id, kind, status, count(*)::int AS count FROM notification GROUP BY tenant_id, kind, status`,
  );
  return { shipments, notifications };
}
