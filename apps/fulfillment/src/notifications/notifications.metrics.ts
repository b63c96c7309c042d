import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY } from '@checkout/service-kit';
import { notificationCounts } from './database/notification.repository';
import { NotificationKind } from './domain';

/** The notifications area's metrics; the notifications gauge reads the database at scrape time. */
@Injectable()
export class NotificationsMetrics {
  /** Emails the notifier recorded as sent, by kind. */
  private readonly sent: Counter<'kind'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry, dataSource: DataSource) {
    this.sent = new Counter({
      name: 'fulfillment_notifications_sent_total',
      help: 'Customer notifications the notifier step recorded as sent, by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
    let pending: Promise<void> | null = null;
    const refresh = (): Promise<void> => {
      pending ??= notificationCounts(dataSource)
        .then((rows) => {
          notifications.reset();
          for (const r of rows)
            notifications.set({ tenant: r.tenantId, kind: r.kind, status: r.status }, r.count);
        })
        .catch(() => undefined) // a scrape while the DB is away keeps the last values
        .finally(() => (pending = null));
      return pending;
    };
    const notifications = new Gauge({
      name: 'fulfillment_notifications',
      help: 'Customer notifications by tenant, kind and status (pending, sent): a growing pending count means the notifier is stuck',
      labelNames: ['tenant', 'kind', 'status'],
      registers: [registry],
      collect: refresh,
    });
  }

  /** Counts one email recorded as sent. */
  notificationSent(kind: NotificationKind): void {
    this.sent.inc({ kind });
  }
}
