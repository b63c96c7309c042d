import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { SERVICE_CONFIG, TenantRegistry } from '@checkout/service-kit';
import { PaymentConfig } from '../../../config/payment.config';
import { PaymentRow, insertRefund, isUuid, updateReturning } from '../../database/payment.repository';
import { OPEN_STATES } from '../../domain/payment-state';
import { PaymentMetrics } from '../../payment.metrics';
import { PspCharge, PspClient } from '../../psp/psp.client';
import { ChargePaymentHandler } from '../charge-payment/charge-payment.handler';

/**
 * ReconcilePayments: asks the PSP about every attempt stuck in pending/unknown past the threshold (by our
 * reference) and moves it; an attempt the PSP has never heard of is charged again with the same key. The
 * orphan sweep walks the PSP's charges of a time window and flags (and by policy refunds) every captured
 * charge that has no succeeded payment of ours.
 */
@Injectable()
export class ReconcilePaymentsHandler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timers: NodeJS.Timeout[] = [];
  private reconciling = false;
  private sweeping = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly dataSource: DataSource,
    private readonly psp: PspClient,
    private readonly charge: ChargePaymentHandler,
    private readonly tenants: TenantRegistry,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('ReconcilePayments');
  }

  onApplicationBootstrap(): void {
    this.timers.push(setInterval(() => void this.reconcile(), this.config.PAYMENT_RECONCILE_INTERVAL_MS));
    if (this.config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS > 0)
      this.timers.push(
        setInterval(() => void this.sweepOrphans(), this.config.PAYMENT_ORPHAN_SWEEP_INTERVAL_MS),
      );
  }

  onApplicationShutdown(): void {
    for (const t of this.timers) clearInterval(t);
  }

  /** One reconciliation round; returns how many attempts it looked at. */
  async reconcile(): Promise<number> {
    if (this.reconciling) return 0;
    this.reconciling = true;
    try {
      await this.refreshGauges();
      const stuck = await updateReturning<PaymentRow>(
        this.dataSource,
        `UPDATE payment_attempt SET reconciled_at = now()
          WHERE id IN (SELECT id FROM payment_attempt
                        WHERE state IN ('pending', 'unknown')
                          AND COALESCE(reconciled_at, state_changed_at) < now() - $1 * interval '1 millisecond'
                        ORDER BY state_changed_at LIMIT 100 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [this.config.PAYMENT_RECONCILE_AFTER_MS],
      );
      // A few at a time, and stop the round when the PSP does not answer: a storm of lookups would keep its
      // breaker open. The rest were stamped and come back next round.
      for (let i = 0; i < stuck.length; i += 8) {
        const answers = await Promise.all(stuck.slice(i, i + 8).map((row) => this.reconcileOne(row)));
        if (answers.includes(false)) break;
      }
      return stuck.length;
    } catch (error) {
      this.logger.error({ err: String(error) }, 'reconciliation failed');
      return 0;
    } finally {
      this.reconciling = false;
    }
  }

  /** Settles one attempt from the PSP's view; false when the PSP did not answer. */
  private async reconcileOne(row: PaymentRow): Promise<boolean> {
    const found = await this.psp.chargesByReference(row.psp_account, row.order_id);
    if (found.kind !== 'ok') {
      this.logger.warn(
        { paymentId: row.id, why: found.kind === 'rejected' ? found.code : found.reason },
        'PSP lookup failed',
      );
      return false;
    }
    const charge = found.value.find((c) => c.metadata?.paymentId === row.id);
    this.logger.info(
      { paymentId: row.id, state: row.state, pspStatus: charge?.status ?? 'none' },
      'reconciling payment',
    );
    if (!charge) {
      // The PSP never got our request: asking again with the same key cannot charge twice.
      return (await this.charge.execute(row)).kind !== 'unavailable';
    }
    await this.charge.apply(row, { kind: 'ok', value: charge }, 'reconciliation');
    return true;
  }

  private async refreshGauges(): Promise<void> {
    const rows: { state: string; stuck: string; oldest: string | null }[] = await this.dataSource.query(
      `SELECT state,
              count(*) FILTER (WHERE state_changed_at < now() - $1 * interval '1 millisecond') AS stuck,
              EXTRACT(EPOCH FROM now() - min(state_changed_at)) AS oldest
         FROM payment_attempt WHERE state = ANY($2::text[]) GROUP BY state`,
      [this.config.PAYMENT_RECONCILE_AFTER_MS, OPEN_STATES],
    );
    for (const state of OPEN_STATES) {
      const r = rows.find((x) => x.state === state);
      this.metrics.stuck.set({ state }, Number(r?.stuck ?? 0));
      this.metrics.stuckOldest.set({ state }, Number(r?.oldest ?? 0));
    }
    const [{ parked }] = await this.dataSource.query(
      `SELECT count(*) AS parked FROM refund WHERE state = 'refund_failed'`,
    );
    this.metrics.refundsParked.set(Number(parked));
  }

  /** One orphan sweep over every tenant's PSP account; returns the orphans found this round. */
  async sweepOrphans(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let found = 0;
    try {
      const to = new Date(Date.now() - this.config.PAYMENT_ORPHAN_MIN_AGE_MS);
      const from = new Date(to.getTime() - this.config.PAYMENT_ORPHAN_WINDOW_MS);
      for (const tenant of this.tenants.all()) {
        const charges = await this.psp.chargesBetween(tenant.pspAccount, from, to);
        if (charges.kind !== 'ok') continue;
        for (const charge of charges.value) {
          if (charge.status === 'succeeded' && !charge.refunded && (await this.isOrphan(tenant.id, charge))) {
            if (await this.recordOrphan(tenant.id, tenant.pspAccount, charge)) found += 1;
          }
        }
      }
    } catch (error) {
      this.logger.error({ err: String(error) }, 'orphan sweep failed');
    } finally {
      this.sweeping = false;
    }
    return found;
  }

  /** A captured charge is ours only if a payment of ours succeeded (or was refunded) with exactly that charge. */
  private async isOrphan(tenantId: string, charge: PspCharge): Promise<boolean> {
    const paymentId = isUuid(charge.metadata?.paymentId) ? charge.metadata.paymentId : null;
    const rows: { state: string; psp_ref: string | null; same_payment: boolean }[] =
      await this.dataSource.query(
        `SELECT state, psp_ref, id = $3::uuid AS same_payment FROM payment_attempt
        WHERE tenant_id = $1 AND (psp_ref = $2 OR id = $3::uuid)
       UNION ALL
       SELECT 'refund', psp_charge_id, false FROM refund WHERE psp_charge_id = $2`,
        [tenantId, charge.id, paymentId],
      );
    if (rows.some((r) => r.state === 'refund')) return false;
    if (rows.some((r) => r.psp_ref === charge.id && (r.state === 'succeeded' || r.state === 'refunded')))
      return false;
    // Still open: reconciliation will settle it with this very charge.
    if (
      rows.some(
        (r) =>
          r.same_payment &&
          ['created', 'pending', 'unknown'].includes(r.state) &&
          (r.psp_ref ?? charge.id) === charge.id,
      )
    )
      return false;
    return true;
  }

  private async recordOrphan(tenantId: string, account: string, charge: PspCharge): Promise<boolean> {
    const action = this.config.PAYMENT_ORPHAN_POLICY;
    return this.dataSource.transaction(async (tx) => {
      const inserted: unknown[] = await tx.query(
        `INSERT INTO orphan_charge (psp_charge_id, tenant_id, reference, amount, currency, action)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
        [charge.id, tenantId, charge.reference, charge.amount, charge.currency, action],
      );
      if (inserted.length === 0) return false;
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
