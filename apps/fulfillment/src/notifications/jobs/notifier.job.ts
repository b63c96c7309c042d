import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { FulfillmentMetrics } from '../../fulfillment.metrics';
import { SendNotifications } from '../commands';

/** Runs the notifier step every NOTIFIER_INTERVAL_MS; a pass never overlaps the previous one. */
@Injectable()
export class NotifierJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly send: SendNotifications,
    private readonly metrics: FulfillmentMetrics,
    private readonly logger: PinoLogger,
    private readonly intervalMs: number,
  ) {
    logger.setContext('NotifierJob');
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.intervalMs);
  }

  private async pass(): Promise<void> {
    try {
      const { sent, failed } = await this.send.execute();
      for (const s of sent) this.metrics.notificationSent(s.kind);
      if (failed > 0) this.logger.warn({ failed }, 'notifications not sent; retried after their lease');
    } catch (error) {
      this.logger.error({ err: String(error) }, 'notifier pass failed');
    }
  }
}
