import { ClaimedNotification } from '../../database/notification.repository';

/** Where emails go. A real one (SMTP, an ESP's API) is out of scope; it must tolerate a resend. */
export interface NotificationTransport {
  send(notification: ClaimedNotification): Promise<void>;
}

/** The transport of this deployment: records the email in the log; the row itself is the record. */
export class LogTransport implements NotificationTransport {
  constructor(private readonly log: (fields: Record<string, unknown>, msg: string) => void) {}

  async send(n: ClaimedNotification): Promise<void> {
    this.log(
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
