import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { PeriodicTask, PspCredentialRegistry, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import {
  PaymentAttempt,
  claimStuckAttempts,
  countParkedRefunds,
  findOrphanChargeIds,
  insertOrphanCharge,
  insertRefund,
  isUuid,
  openStateGauges,
} from '../database/payment.repository';
import { OPEN_STATES } from '../domain/payment-state';
import { PaymentMetrics } from '../payment.metrics';
import { PspCharge, PspClient } from '../psp/psp.client';
import { ChargePaymentHandler } from '../commands/charge-payment/charge-payment.handler';

/**
 * ReconcilePayments: settles attempts stuck in pending/unknown with the PSP and sweeps for orphan charges
 * (docs/design/payment.md).
 */
@Injectable()
export class ReconcilePaymentsJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly tasks: PeriodicTask[];

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly dataSource: DataSource,
    private readonly psp: PspClient,
    private readonly charge: ChargePaymentHandler,
    private readonly accounts: PspCredentialRegistry,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ReconcilePayments');
    this.tasks = [
      new PeriodicTask(
        'reconciliation',
        config.PAYMENT_RECONCILE_INTERVAL_MS,
        () => this.reconcile(),
        logger,
      ),
    ];
    if (config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS > 0)
      this.tasks.push(
        new PeriodicTask(
          'orphan-sweep',
          config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS,
          () => this.sweepOrphans(),
          logger,
        ),
      );
  }

  onApplicationBootstrap(): void {
    for (const task of this.tasks) task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.tasks.map((task) => task.stop()));
  }

  /**
   * One reconciliation round (never two at once: its periodic task); returns how many attempts it looked at.
   */
  private async reconcile(): Promise<number> {
    try {
      await this.refreshGauges();
      const stuck = await claimStuckAttempts(this.dataSource, this.config.PAYMENT_RECONCILE_AFTER_MS);
      // A few at a time, and stop the round when the PSP does not answer: a storm of lookups would keep its
      // breaker open. The rest were stamped and come back next round.
      for (let i = 0; i < stuck.length; i += 8) {
        const answers = await Promise.all(stuck.slice(i, i + 8).map((attempt) => this.reconcileOne(attempt)));
        if (answers.includes(false)) break;
      }
      return stuck.length;
    } catch (error) {
      this.logger.error({ err: String(error) }, 'reconciliation failed');
      return 0;
    }
  }

  /** Settles one attempt from the PSP's view; false when the PSP did not answer. */
  private async reconcileOne(attempt: PaymentAttempt): Promise<boolean> {
    const found = await this.psp.chargesByReference(attempt.pspAccount, attempt.orderId);
    if (found.kind !== 'ok') {
      this.logger.warn(
        { paymentId: attempt.id, why: found.kind === 'rejected' ? found.code : found.reason },
        'PSP lookup failed',
      );
      return false;
    }
    const charge = found.value.find((c) => c.metadata?.paymentId === attempt.id);
    this.logger.info(
      { paymentId: attempt.id, state: attempt.state, pspStatus: charge?.status ?? 'none' },
      'reconciling payment',
    );
    if (!charge) {
      // The PSP never got our request: asking again with the same key cannot charge twice.
      return (await this.charge.execute(attempt)).kind !== 'unavailable';
    }
    await this.charge.apply(attempt, { kind: 'ok', value: charge }, 'reconciliation');
    return true;
  }

  private async refreshGauges(): Promise<void> {
    const gauges = await openStateGauges(this.dataSource, this.config.PAYMENT_RECONCILE_AFTER_MS);
    for (const state of OPEN_STATES) {
      const g = gauges.find((x) => x.state === state);
      this.metrics.stuck.set({ state }, g?.stuck ?? 0);
      this.metrics.stuckOldest.set({ state }, g?.oldestSeconds ?? 0);
    }
    this.metrics.refundsParked.set(await countParkedRefunds(this.dataSource));
  }

  /**
   * One orphan sweep over every tenant's PSP account (one at a time); returns the orphans found this round. One
   * account's failure (its PSP lookups, a bad row) is logged and the sweep goes on with the next account.
   */
  private async sweepOrphans(): Promise<number> {
    let found = 0;
    const to = new Date(Date.now() - this.config.PAYMENT_ORPHAN_MIN_AGE_MS);
    const from = new Date(to.getTime() - this.config.PAYMENT_ORPHAN_WINDOW_MS);
    for (const account of this.accounts.all()) {
      try {
        const charges = await this.psp.chargesBetween(account.accountId, from, to);
        if (charges.kind !== 'ok') continue;
        const captured = charges.value.filter((c) => c.status === 'succeeded' && !c.refunded);
        for (const charge of await this.orphansAmong(account.tenantId, captured)) {
          if (await this.recordOrphan(account.tenantId, account.accountId, charge)) found += 1;
        }
      } catch (error) {
        this.logger.error(
          { tenantId: account.tenantId, account: account.accountId, err: String(error) },
          'orphan sweep failed for this account',
        );
      }
    }
    return found;
  }

  /**
   * The captured charges of the window that no payment of ours accounts for, in one query
   * (docs/design/payment.md).
   */
  private async orphansAmong(tenantId: string, charges: PspCharge[]): Promise<PspCharge[]> {
    if (charges.length === 0) return [];
    const orphans = new Set(
      await findOrphanChargeIds(
        this.dataSource,
        tenantId,
        charges.map((c) => ({
          id: c.id,
          paymentId: isUuid(c.metadata?.paymentId) ? c.metadata.paymentId : null,
        })),
      ),
    );
    return charges.filter((c) => orphans.has(c.id));
  }

  private async recordOrphan(tenantId: string, account: string, charge: PspCharge): Promise<boolean> {
    const action = this.config.PAYMENT_ORPHAN_POLICY;
    return this.dataSource.transaction(async (tx) => {
      const inserted = await insertOrphanCharge(tx, {
        pspChargeId: charge.id,
        tenantId,
        reference: charge.reference,
        amount: charge.amount,
        currency: charge.currency,
        action,
      });
      if (!inserted) return false;
      this.metrics.orphans.inc({ action });
      this.logger.warn(
        { tenantId, chargeId: charge.id, reference: charge.reference, amount: charge.amount, action },
        'captured charge without a succeeded payment of ours',
      );
      if (action === 'refund') {
        await insertRefund(tx, {
          id: randomUUID(),
          tenantId,
          orderId: charge.reference,
          paymentId: null,
          pspAccount: account,
          pspChargeId: charge.id,
          amount: charge.amount - (charge.amountRefunded ?? 0),
          currency: charge.currency,
          reason: 'orphaned_charge',
          cause: null,
        });
      }
      return true;
    });
  }
}
