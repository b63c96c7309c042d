import { DataSource } from 'typeorm';
import { NotificationKind } from '../../domain';
import { claimPending, markSent } from '../../database/notification.repository';
import { NotificationTransport } from './notification.transport';

/** Settings of one notifier pass. */
export interface SendNotificationsOptions {
  batchSize: number;
  /** How long a claimed row stays reserved for this pass; a crashed pass's rows come back after it. */
  leaseMs: number;
}

/** What one pass did. */
export interface SendNotificationsResult {
  sent: { kind: NotificationKind; tenantId: string }[];
  failed: number;
}

/**
 * SendNotifications, the notifier step: leases pending notifications with a recipient (one short statement),
 * hands each to the transport outside any transaction, then records it as sent (conditional update). A
 * failure leaves the row pending, and it is retried once its lease runs out: delivery is at least once.
 */
export class SendNotifications {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transport: NotificationTransport,
    private readonly options: SendNotificationsOptions,
  ) {}

  async execute(): Promise<SendNotificationsResult> {
    const claimed = await claimPending(this.dataSource, this.options.batchSize, this.options.leaseMs);
    const result: SendNotificationsResult = { sent: [], failed: 0 };
    for (const n of claimed) {
      try {
        await this.transport.send(n);
      } catch {
        result.failed += 1;
        continue;
      }
      if (await markSent(this.dataSource, n.notificationId))
        result.sent.push({ kind: n.kind, tenantId: n.tenantId });
    }
    return result;
  }
}
