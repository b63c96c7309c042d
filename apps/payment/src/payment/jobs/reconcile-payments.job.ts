import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ScrapeProbe } from '@checkout/messaging';
import { DataSource } from 'typeorm';
import { NextDue, PeriodicTask, PspCredentialRegistry, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import {
  PaymentAttempt,
  claimStuckAttempts,
  countParkedRefunds,
  findOrphanChargeIds,
  insertOrphanCharge,
  insertRefund,
  isUuid,
  nextReconcileDueMs,
  openStateGauges,
} from '../database/payment.repository';
import { OPEN_STATES } from '../domain/payment-state';
import { PaymentMetrics } from '../payment.metrics';
import { PspCharge, PspClient } from '../psp/psp.client';
import { ChargePaymentHandler } from '../commands/charge-payment/charge-payment.handler';

/** How long after a charge's minimum age the woken sweep looks (the PSP stamped it before its webhook left). */
const ORPHAN_SWEEP_MARGIN_MS = 500;

/**
 * ReconcilePayments: settles attempts stuck in pending/unknown with the PSP and sweeps for orphan charges
 * (docs/design/payment.md). Both sleep until their work falls due instead of polling: reconciliation until the
 * oldest attempt awaiting the PSP is PAYMENT_RECONCILE_AFTER_MS old (the charge worker says when it moves one
 * there), the sweep until a charge we cannot account for has aged PAYMENT_ORPHAN_MIN_AGE_MS (a webhook about it
 * says so). Their intervals are the longest sleeps, for what another replica left behind.
 */
@Injectable()
export class ReconcilePaymentsJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly reconciliation: PeriodicTask;
  private readonly orphanSweep?: PeriodicTask;

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
    this.reconciliation = new PeriodicTask(
      'reconciliation',
      config.PAYMENT_RECONCILE_INTERVAL_MS,
      () => this.reconcile(),
      logger,
    );
    if (config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS > 0)
      this.orphanSweep = new PeriodicTask(
        'orphan-sweep',
        config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS,
        () => this.sweepOrphans(),
        logger,
      );
    // The stuck and parked gauges are read when /metrics is scraped, not by every round.
    metrics.readOpenStatesWith(
      new ScrapeProbe('payment-open-states', () => this.refreshGauges(), 1_000, logger),
    );
  }

  onApplicationBootstrap(): void {
    this.reconciliation.start();
    // Attempts a previous run left awaiting the PSP: a first round now says when they fall due.
    this.reconciliation.dueIn(0);
    this.orphanSweep?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.reconciliation.stop(), this.orphanSweep?.stop()]);
  }

  /** An attempt was moved to await the PSP (pending): it falls due for reconciliation after the threshold. */
  attemptAwaitsPsp(): void {
    this.reconciliation.dueIn(this.config.PAYMENT_RECONCILE_AFTER_MS);
  }

  /**
   * The PSP told us of a captured charge that no attempt of ours took (an unmatched or ignored
   * `charge.succeeded`): the sweep looks once the charge is old enough to be in its window.
   */
  unaccountedChargeSeen(): void {
    this.orphanSweep?.dueIn(this.config.PAYMENT_ORPHAN_MIN_AGE_MS + ORPHAN_SWEEP_MARGIN_MS);
  }

  /**
   * One reconciliation round (never two at once: its periodic task); says when the next attempt falls due.
   */
  private async reconcile(): Promise<NextDue> {
    const after = this.config.PAYMENT_RECONCILE_AFTER_MS;
    try {
      const stuck = await claimStuckAttempts(this.dataSource, after);
      // A few at a time, and stop the round when the PSP does not answer: a storm of lookups would keep its
      // breaker open. The rest were stamped and come back next round.
      for (let i = 0; i < stuck.length; i += 8) {
        const answers = await Promise.all(stuck.slice(i, i + 8).map((attempt) => this.reconcileOne(attempt)));
        if (answers.includes(false)) break;
      }
      return { dueInMs: await nextReconcileDueMs(this.dataSource, after) };
    } catch (error) {
      this.logger.error({ err: String(error) }, 'reconciliation failed');
      // The database or the PSP is away: look again after the threshold rather than at the longest sleep.
      return { dueInMs: after };
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
