import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import { deleteOldPspEvents } from '../database/payment.repository';
import { PaymentMetrics } from '../payment.metrics';

/** The settings the prune job reads. */
export type PrunePspEventsConfig = Pick<
  PaymentConfig,
  | 'PAYMENT_PSP_EVENT_RETENTION_MS'
  | 'PAYMENT_PSP_EVENT_PRUNE_INTERVAL_MS'
  | 'PAYMENT_PSP_EVENT_PRUNE_BATCH'
  | 'PAYMENT_PSP_EVENT_PRUNE_MAX_BATCHES'
>;

/**
 * PrunePspEvents: deletes webhook dedupe rows past PAYMENT_PSP_EVENT_RETENTION_MS, in short batches
 * (docs/design/payment.md).
 */
@Injectable()
export class PrunePspEventsJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PrunePspEventsConfig,
    private readonly dataSource: DataSource,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('PrunePspEvents');
    this.task = new PeriodicTask(
      'psp-event-retention',
      config.PAYMENT_PSP_EVENT_PRUNE_INTERVAL_MS,
      () => this.prune(),
      logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** One pass (the periodic task never runs two at once); returns how many rows it deleted. */
  async prune(): Promise<number> {
    let total = 0;
    try {
      const batch = this.config.PAYMENT_PSP_EVENT_PRUNE_BATCH;
      for (let i = 0; i < this.config.PAYMENT_PSP_EVENT_PRUNE_MAX_BATCHES; i++) {
        const deleted = await deleteOldPspEvents(
          this.dataSource,
          this.config.PAYMENT_PSP_EVENT_RETENTION_MS,
          batch,
        );
        total += deleted;
        this.metrics.pspEventsPruned.inc(deleted);
        if (deleted < batch) break;
      }
      if (total > 0) this.logger.info({ deleted: total }, 'pruned PSP event ids past their retention');
    } catch (error) {
      this.logger.error({ err: String(error), deleted: total }, 'PSP event pruning failed');
    }
    return total;
  }
}
