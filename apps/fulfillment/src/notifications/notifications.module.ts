import { Module } from '@nestjs/common';
import {
  LogTransport,
  NOTIFICATION_TRANSPORT,
  RecordNotificationHandler,
  SendNotificationsHandler,
} from './commands';
import { NotificationsConsumer } from './consumers/notifications.consumer';
import { NotificationsController } from './http/notifications.controller';
import { NotifierJob } from './jobs/notifier.job';
import { NotificationsMetrics } from './notifications.metrics';

/** Customer notifications: queued in reaction to the saga, sent by the notifier job, read by the HTTP API. */
@Module({
  // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
  controllers: [NotificationsController, NotificationsConsumer],
  providers: [
    RecordNotificationHandler,
    SendNotificationsHandler,
    { provide: NOTIFICATION_TRANSPORT, useClass: LogTransport },
    NotificationsMetrics,
    NotifierJob,
  ],
  exports: [RecordNotificationHandler],
})
export class NotificationsModule {}
