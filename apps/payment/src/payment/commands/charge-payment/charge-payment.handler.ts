import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../../config/payment.config';
import { PaymentRow, noteError, notePspRef } from '../../database/payment.repository';
import { PspCharge, PspClient, PspResult } from '../../psp/psp.client';
import { MovePaymentHandler } from '../move-payment/move-payment.handler';
import { TransitionSource } from '../../domain/payment-state';

/**
 * ChargePayment: sends an attempt's charge to the PSP, outside any DB transaction, always with the attempt's
 * own idempotency key, then records the answer in a new short transaction. No answer means `unknown`.
 */
@Injectable()
export class ChargePaymentHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly psp: PspClient,
    private readonly move: MovePaymentHandler,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ChargePayment');
  }

  /** Charges (or re-asks, same key) and applies what the PSP said. */
  async execute(row: PaymentRow): Promise<PspResult<PspCharge>> {
    await this.dataSource.query(
      `UPDATE payment_attempt SET charge_requests = charge_requests + 1 WHERE id = $1`,
      [row.id],
    );
    const result = await this.psp.charge(row.psp_account, row.idempotency_key, {
      amount: Number(row.amount),
      currency: row.currency,
      token: row.payment_token,
      reference: row.order_id,
      metadata: { paymentId: row.id, tenantId: row.tenant_id },
    });
    await this.apply(row, result, 'response');
    return result;
  }

  /** Applies a charge's answer (or its absence) through the state machine. */
  async apply(row: PaymentRow, result: PspResult<PspCharge>, source: TransitionSource): Promise<void> {
    const base = { paymentId: row.id, tenantId: row.tenant_id, source };
    await this.dataSource.transaction(async (tx) => {
      if (result.kind === 'unavailable') {
        await noteError(tx, row.id, result.reason);
        await this.move.execute(tx, { ...base, to: 'unknown', detail: result.reason });
        return;
      }
      if (result.kind === 'rejected') {
        if (result.status === 422) {
          // Our own key misuse: the PSP did not tell us what happened to the money, so do not guess.
          await noteError(tx, row.id, `${result.code}: ${result.message}`);
          await this.move.execute(tx, { ...base, to: 'unknown', detail: result.code });
          return;
        }
        await this.move.execute(tx, {
          ...base,
          to: 'failed',
          failureReason: result.code,
          detail: result.message || null,
        });
        return;
      }
      const charge = result.value;
      await noteError(tx, row.id, null);
      if (charge.status === 'succeeded')
        await this.move.execute(tx, { ...base, to: 'succeeded', pspRef: charge.id });
      else if (charge.status === 'failed')
        await this.move.execute(tx, {
          ...base,
          to: 'failed',
          pspRef: charge.id,
          failureReason: charge.failureCode ?? 'declined',
        });
      else await notePspRef(tx, row.id, charge.id);
    });
  }
}

/**
 * Picks up new attempts (state `created`), claims them by moving them to `pending`, and charges each. SIGTERM
 * stops claiming and waits for every charge in flight to record the PSP's answer, before the database closes
 * (the process's SHUTDOWN_TIMEOUT_MS bounds the wait; a charge cut there stays `pending` for reconciliation).
 */
@Injectable()
export class ChargeWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: PeriodicTask;
  private readonly charging = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly dataSource: DataSource,
    private readonly charge: ChargePaymentHandler,
    private readonly move: MovePaymentHandler,
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
   * statement, and charge them concurrently. Returns how many it claimed (0: idle, the pause grows).
   */
  private async poll(): Promise<number | undefined> {
    try {
      const free = this.config.PAYMENT_CHARGE_CONCURRENCY - this.inFlight;
      // Busy, not idle: every slot is charging, and each one that frees looks again itself.
      if (free <= 0) return undefined;
      if (this.stopped) return undefined;
      const claimed = await this.move.claimNew(this.dataSource, free);
      for (const row of claimed) {
        const charging: Promise<void> = this.charge
          .execute(row)
          .then(() => undefined)
          .catch((error: unknown) =>
            this.logger.error({ paymentId: row.id, err: String(error) }, 'charge failed unexpectedly'),
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
