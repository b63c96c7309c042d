import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { FulfillmentConfig } from '../../../config/fulfillment.config';
import { NotificationKind } from '../../domain';
import { claimPending, markSent } from '../../database/notification.repository';
import { NOTIFICATION_TRANSPORT, NotificationTransport } from './notification.transport';

/** How long a claimed row stays reserved for a pass; a crashed pass's rows come back after it. */
const NOTIFIER_LEASE_MS = 30_000;

/** Settings of one notifier pass: NOTIFIER_BATCH_SIZE rows at most. */
export type SendNotificationsConfig = Pick<FulfillmentConfig, 'NOTIFIER_BATCH_SIZE'>;

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
@Injectable()
export class SendNotificationsHandler {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(NOTIFICATION_TRANSPORT) private readonly transport: NotificationTransport,
    @Inject(SERVICE_CONFIG) private readonly config: SendNotificationsConfig,
  ) {}

  async execute(): Promise<SendNotificationsResult> {
    const claimed = await claimPending(this.dataSource, this.config.NOTIFIER_BATCH_SIZE, NOTIFIER_LEASE_MS);
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
