import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { withSpanOf } from '@checkout/tracing';
import { DatabaseWakeups, NextDue, PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import {
  REFUNDS_CHANNEL,
  REFUND_CLAIM_LIMIT,
  Refund,
  claimDueRefunds,
  deferRefund,
  nextRefundDueMs,
} from '../database/payment.repository';
import { PspClient } from '../psp/psp.client';
import { SettleRefundHandler } from '../commands/settle-refund/settle-refund.handler';

/**
 * Sends due refunds to the PSP with each refund's own idempotency key, retrying with exponential backoff; after
 * PAYMENT_REFUND_MAX_ATTEMPTS it parks the refund as `refund_failed` (metric, API, log) for an operator. The
 * answer goes through SettleRefund, as the PSP's refund webhook does: whichever tells first completes it.
 * It sleeps until the earliest pending refund is due; a committed refund request wakes it at once (LISTEN/NOTIFY,
 * from any replica), and it looks at least every PAYMENT_REFUND_MAX_SLEEP_MS in case a wake-up was lost.
 */
@Injectable()
export class RefundPaymentsJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;
  private unsubscribe?: () => void;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly dataSource: DataSource,
    private readonly psp: PspClient,
    private readonly settle: SettleRefundHandler,
    private readonly wakeups: DatabaseWakeups,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('RefundWorker');
    this.task = new PeriodicTask(
      'refund-worker',
      config.PAYMENT_REFUND_MAX_SLEEP_MS,
      () => this.poll(),
      logger,
    );
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.wakeups.on(REFUNDS_CHANNEL, () => this.task.wake());
    this.task.start();
    // Refunds left due by a previous run go now, not after the first sleep.
    this.task.wake();
  }

  onApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    return this.task.stop();
  }

  /**
   * Claims due refunds (a lease: next_attempt_at moves ahead) and sends them; one round at a time. Resolves to when
   * the next one is due: at once when the claim was full, else the earliest pending refund's next attempt.
   */
  private async poll(): Promise<NextDue> {
    try {
      const lease = this.config.PAYMENT_PSP_TIMEOUT_MS * (this.config.PAYMENT_PSP_RETRIES + 1) + 5_000;
      const due = await claimDueRefunds(this.dataSource, lease);
      await Promise.all(due.map((r) => this.send(r)));
      if (due.length === REFUND_CLAIM_LIMIT) return { dueInMs: 0 };
      return { dueInMs: await nextRefundDueMs(this.dataSource) };
    } catch (error) {
      this.logger.error({ err: String(error) }, 'refund poll failed');
      return { dueInMs: this.config.PAYMENT_REFUND_BACKOFF_MS };
    }
  }

  /** One refund at the PSP, in the trace of the event that asked for it (when it came from a saga). */
  private send(refund: Refund): Promise<void> {
    return withSpanOf(
      refund.cause?.traceparent,
      'payment refund',
      { 'saga.id': refund.orderId, 'tenant.id': refund.tenantId, 'refund.id': refund.id },
      () => this.sendNow(refund),
    );
  }

  private async sendNow(refund: Refund): Promise<void> {
    const result = await this.psp.refund(refund.pspAccount, refund.idempotencyKey, {
      charge: refund.pspChargeId,
      amount: Number(refund.amount),
      reason: refund.reason,
    });
    if (result.kind === 'ok') {
      await this.dataSource.transaction((tx) =>
        this.settle.succeeded(tx, { refundId: refund.id, pspRefundId: result.value.id, source: 'refund' }),
      );
      return;
    }
    const error =
      result.kind === 'rejected' ? `${result.status} ${result.code}: ${result.message}` : result.reason;
    // A refusal will not change by asking again; no answer might.
    if (result.kind === 'rejected' || refund.attempts >= this.config.PAYMENT_REFUND_MAX_ATTEMPTS) {
      await this.dataSource.transaction((tx) =>
        this.settle.failed(tx, { refundId: refund.id, error, source: 'refund' }),
      );
      return;
    }
    const open = result.kind === 'unavailable' && result.reason === 'circuit open';
    // An open breaker would refuse again at once: wait at least until it lets a request through.
    const backoff = Math.max(
      open ? this.config.PAYMENT_BREAKER_HALF_OPEN_MS : 0,
      Math.min(
        this.config.PAYMENT_REFUND_BACKOFF_MS * 2 ** (refund.attempts - 1),
        this.config.PAYMENT_REFUND_BACKOFF_MAX_MS,
      ),
    );
    await deferRefund(this.dataSource, refund.id, backoff, error);
    this.logger.warn(
      { refundId: refund.id, attempts: refund.attempts, backoffMs: backoff, err: error },
      'refund will be retried',
    );
  }
}
