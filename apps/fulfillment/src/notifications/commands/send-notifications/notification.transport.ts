import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ClaimedNotification } from '../../database/notification.repository';

/** Where emails go. A real one (SMTP, an ESP's API) is out of scope; it must tolerate a resend. */
export interface NotificationTransport {
  send(notification: ClaimedNotification): Promise<void>;
}

/** Injection token of the NotificationTransport of this deployment. */
export const NOTIFICATION_TRANSPORT = Symbol('NOTIFICATION_TRANSPORT');

/** The transport of this deployment: records the email in the log; the row itself is the record. */
@Injectable()
export class LogTransport implements NotificationTransport {
  constructor(private readonly logger: PinoLogger) {}

  async send(n: ClaimedNotification): Promise<void> {
    this.logger.info(
      {
        tenantId: n.tenantId,
        orderId: n.orderId,
        kind: n.kind,
        customerId: n.customerId,
        subject: n.subject,
      },
      'notification sent',
    );
  }
}
