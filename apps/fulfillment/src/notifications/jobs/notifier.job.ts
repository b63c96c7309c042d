import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { FulfillmentConfig } from '../../config/fulfillment.config';
import { SendNotificationsHandler } from '../commands';
import { NotificationsMetrics } from '../notifications.metrics';

/** The notifier's pace: NOTIFIER_INTERVAL_MS while busy, NOTIFIER_IDLE_INTERVAL_MS while idle. */
export type NotifierConfig = Pick<FulfillmentConfig, 'NOTIFIER_INTERVAL_MS' | 'NOTIFIER_IDLE_INTERVAL_MS'>;

/**
 * Runs the notifier step every NOTIFIER_INTERVAL_MS while there is something to send, backing off to
 * NOTIFIER_IDLE_INTERVAL_MS while there is nothing; a pass never overlaps the previous one.
 */
@Injectable()
export class NotifierJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly send: SendNotificationsHandler,
    private readonly metrics: NotificationsMetrics,
    private readonly logger: PinoLogger,
    @Inject(SERVICE_CONFIG) config: NotifierConfig,
  ) {
    logger.setContext('NotifierJob');
    const intervalMs = config.NOTIFIER_INTERVAL_MS;
    this.task = new PeriodicTask('notifier', intervalMs, () => this.pass(), logger.logger, {
      maxMs: Math.max(intervalMs, config.NOTIFIER_IDLE_INTERVAL_MS),
    });
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Returns how many notifications it handled (0: idle, the pause grows). */
  private async pass(): Promise<number> {
    const { sent, failed } = await this.send.execute();
    for (const s of sent) this.metrics.notificationSent(s.kind);
    if (failed > 0) this.logger.warn({ failed }, 'notifications not sent; retried after their lease');
    return sent.length + failed;
  }
}
