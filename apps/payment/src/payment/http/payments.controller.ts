import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  OrphanChargesView,
  PaymentsQuery,
  PaymentsView,
  RefundIdParam,
  RefundView,
  RefundsQuery,
  RefundsView,
} from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate, wakeOnCommit } from '@checkout/service-kit';
import {
  findOrderPayments,
  listOrphanCharges,
  listRefunds,
  requeueRefund,
} from '../database/payment-read.repository';
import { REFUNDS_CHANNEL, Refund } from '../database/payment.repository';
import { RefundNotParked } from '../domain/payment.errors';
import { REFUND_ALLOWED_FROM } from '../domain/refund-state';

const refundView = (r: Refund): RefundView => ({
  refundId: r.id,
  orderId: r.orderId,
  paymentId: r.paymentId,
  pspChargeId: r.pspChargeId,
  amount: Number(r.amount),
  currency: r.currency,
  reason: r.reason,
  state: r.state,
  attempts: r.attempts,
  lastError: r.lastError,
  pspRefundId: r.pspRefundId,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

/** The tenant's payments, refunds (including parked `refund_failed` ones) and orphaned charges. */
@Controller('v1/payments')
@UseGuards(TenantGuard)
export class PaymentsController {
  constructor(private readonly dataSource: DataSource) {}

  /** The order's payment attempts with state, history and refund. */
  @Get()
  async byOrder(@CurrentTenant() tenant: Tenant, @Query() query: unknown): Promise<PaymentsView> {
    const { orderId } = validate(PaymentsQuery, query, 'query');
    const { payments, history, refunds } = await findOrderPayments(this.dataSource, tenant.id, orderId);
    return {
      orderId,
      payments: payments.map((p) => ({
        paymentId: p.id,
        orderId: p.orderId,
        state: p.state,
        amount: Number(p.amount),
        currency: p.currency,
        pspReference: p.pspRef,
        failureReason: p.failureReason,
        refundOnSuccess: p.refundOnSuccess,
        chargeRequests: p.chargeRequests,
        lastError: p.lastError,
        createdAt: p.createdAt.toISOString(),
        updatedAt: p.updatedAt.toISOString(),
        history: history
          .filter((h) => h.paymentId === p.id)
          .map((h) => ({
            from: h.fromState,
            to: h.toState,
            source: h.source,
            pspEventId: h.pspEventId,
            detail: h.detail,
            at: h.createdAt.toISOString(),
          })),
        refund: refunds.filter((r) => r.paymentId === p.id).map(refundView)[0] ?? null,
      })),
    };
  }

  /** Refunds of the tenant, e.g. `?state=refund_failed` for the operator's queue. */
  @Get('refunds')
  async refunds(@CurrentTenant() tenant: Tenant, @Query() query: unknown): Promise<RefundsView> {
    const { state } = validate(RefundsQuery, query, 'query');
    const rows = await listRefunds(this.dataSource, tenant.id, state ?? null);
    return { refunds: rows.map(refundView) };
  }

  /** An operator sends a parked refund back to the retry queue (same idempotency key: still at most once). */
  @Post('refunds/:refundId/retry')
  @HttpCode(202)
  async retryRefund(
    @CurrentTenant() tenant: Tenant,
    @Param('refundId') refundId: string,
  ): Promise<RefundView> {
    const id = validate(RefundIdParam.shape.refundId, refundId, 'refundId');
    const refund = await requeueRefund(this.dataSource, tenant.id, id, REFUND_ALLOWED_FROM.pending);
    if (!refund) throw new RefundNotParked();
    // Committed already (one statement): the refund worker of every replica looks now, not after its sleep.
    await wakeOnCommit(this.dataSource, REFUNDS_CHANNEL);
    return refundView(refund);
  }

  /** Captured PSP charges that had no succeeded payment of ours, as the orphan sweep found them. */
  @Get('orphan-charges')
  async orphans(@CurrentTenant() tenant: Tenant): Promise<OrphanChargesView> {
    const rows = await listOrphanCharges(this.dataSource, tenant.id);
    return {
      orphanCharges: rows.map((r) => ({
        pspChargeId: r.pspChargeId,
        reference: r.reference,
        amount: Number(r.amount),
        currency: r.currency,
        action: r.action,
        detectedAt: r.detectedAt.toISOString(),
      })),
    };
  }
}
