import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { PeriodicTask } from '@checkout/service-kit';
import { FulfillmentMetrics } from '../../fulfillment.metrics';
import { SendNotifications } from '../commands';

/**
 * Runs the notifier step every NOTIFIER_INTERVAL_MS while there is something to send, backing off to
 * NOTIFIER_IDLE_INTERVAL_MS while there is nothing; a pass never overlaps the previous one.
 */
@Injectable()
export class NotifierJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly send: SendNotifications,
    private readonly metrics: FulfillmentMetrics,
    private readonly logger: PinoLogger,
    intervalMs: number,
    idleIntervalMs = intervalMs,
  ) {
    logger.setContext('NotifierJob');
    this.task = new PeriodicTask('notifier', intervalMs, () => this.pass(), logger.logger, {
      maxMs: Math.max(intervalMs, idleIntervalMs),
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
