import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { OrderConfig } from '../../config/order.config';
import { deleteExpiredIdempotencyKeys } from '../database/idempotency.repository';

/** Deletes Idempotency-Keys past their TTL (IDEMPOTENCY_KEY_TTL_HOURS) every IDEMPOTENCY_CLEANUP_INTERVAL_MS. */
@Injectable()
export class ExpireIdempotencyKeysJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: OrderConfig,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ExpireIdempotencyKeys');
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.runOnce(), this.config.IDEMPOTENCY_CLEANUP_INTERVAL_MS);
    this.timer.unref();
  }

  /** One pass; overlapping ticks are skipped. */
  async runOnce(): Promise<void> {
    if (this.running) return;
    this.running = deleteExpiredIdempotencyKeys(this.dataSource)
      .then((deleted) => {
        if (deleted > 0) this.logger.info({ deleted }, 'expired idempotency keys deleted');
      })
      .catch((error: unknown) => this.logger.error({ err: String(error) }, 'idempotency key cleanup failed'))
      .finally(() => {
        this.running = undefined;
      });
    await this.running;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
