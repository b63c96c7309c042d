import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import { ChargePaymentHandler } from '../commands/charge-payment/charge-payment.handler';
import { MovePaymentHandler } from '../commands/move-payment/move-payment.handler';
import { ReconcilePaymentsJob } from './reconcile-payments.job';

/**
 * Picks up new attempts (state `created`), claims them by moving them to `pending`, and charges each. SIGTERM
 * stops claiming and waits for every charge in flight to record the PSP's answer, before the database closes
 * (the process's SHUTDOWN_TIMEOUT_MS bounds the wait; a charge cut there stays `pending` for reconciliation).
 */
@Injectable()
export class ChargePaymentsJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: PeriodicTask;
  private readonly charging = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly dataSource: DataSource,
    private readonly charge: ChargePaymentHandler,
    private readonly move: MovePaymentHandler,
    private readonly reconcile: ReconcilePaymentsJob,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ChargeWorker');
    this.task = new PeriodicTask('charge-worker', config.PAYMENT_CHARGE_POLL_MS, () => this.poll(), logger, {
      maxMs: Math.max(config.PAYMENT_CHARGE_IDLE_POLL_MS, config.PAYMENT_CHARGE_POLL_MS),
    });
  }

  onApplicationBootstrap(): void {
    this.task.start();
    // Attempts left by a previous run are charged now, not after the first pause.
    this.task.wake();
  }

  /** New attempts were committed (by this process's consumer): look for them now. */
  wake(): void {
    this.task.wake();
  }

  /** Charges sent to the PSP whose answer is not recorded yet. */
  get inFlight(): number {
    return this.charging.size;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
    if (this.charging.size > 0)
      this.logger.info({ inFlight: this.charging.size }, 'waiting for the charges in flight');
    await Promise.all([...this.charging]);
  }

  /**
   * One round (never two at once: its periodic task): claim as many new attempts as there are free slots, in one
   * statement that also counts their charge requests, and charge them concurrently. Returns how many it claimed
   * (0: idle, the pause grows).
   */
  private async poll(): Promise<number | undefined> {
    try {
      const free = this.config.PAYMENT_CHARGE_CONCURRENCY - this.inFlight;
      // Busy, not idle: every slot is charging, and each one that frees looks again itself.
      if (free <= 0) return undefined;
      if (this.stopped) return undefined;
      const claimed = await this.move.claimNew(this.dataSource, free);
      // Now pending: reconciliation looks at them when they have waited the threshold, if still unsettled.
      if (claimed.length > 0) this.reconcile.attemptAwaitsPsp();
      for (const attempt of claimed) {
        const charging: Promise<void> = this.charge
          .execute(attempt, { counted: true })
          .then(() => undefined)
          .catch((error: unknown) =>
            this.logger.error({ paymentId: attempt.id, err: String(error) }, 'charge failed unexpectedly'),
          )
          .finally(() => {
            this.charging.delete(charging);
            // A slot is free: look for waiting attempts now rather than at the next tick.
            if (!this.stopped) void this.task.runOnce();
          });
        this.charging.add(charging);
      }
      return claimed.length;
    } catch (error) {
      this.logger.error({ err: String(error) }, 'charge poll failed');
      return undefined;
    }
  }
}
