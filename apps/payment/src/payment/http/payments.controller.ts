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
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import {
  findOrderPayments,
  listOrphanCharges,
  listRefunds,
  requeueRefund,
} from '../database/payment-read.repository';
import { RefundRow } from '../database/payment.repository';
import { RefundNotParked } from '../domain/payment.errors';
import { REFUND_ALLOWED_FROM } from '../domain/refund-state';

const refundView = (r: RefundRow): RefundView => ({
  refundId: r.id,
  orderId: r.order_id,
  paymentId: r.payment_id,
  pspChargeId: r.psp_charge_id,
  amount: Number(r.amount),
  currency: r.currency,
  reason: r.reason,
  state: r.state,
  attempts: r.attempts,
  lastError: r.last_error,
  pspRefundId: r.psp_refund_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
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
        orderId: p.order_id,
        state: p.state,
        amount: Number(p.amount),
        currency: p.currency,
        pspReference: p.psp_ref,
        failureReason: p.failure_reason,
        refundOnSuccess: p.refund_on_success,
        chargeRequests: p.charge_requests,
        lastError: p.last_error,
        createdAt: p.created_at.toISOString(),
        updatedAt: p.updated_at.toISOString(),
        history: history
          .filter((h) => h.payment_id === p.id)
          .map((h) => ({
            from: h.from_state,
            to: h.to_state,
            source: h.source,
            pspEventId: h.psp_event_id,
            detail: h.detail,
            at: h.created_at.toISOString(),
          })),
        refund: refunds.filter((r) => r.payment_id === p.id).map(refundView)[0] ?? null,
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
    return refundView(refund);
  }

  /** Captured PSP charges that had no succeeded payment of ours, as the orphan sweep found them. */
  @Get('orphan-charges')
  async orphans(@CurrentTenant() tenant: Tenant): Promise<OrphanChargesView> {
    const rows = await listOrphanCharges(this.dataSource, tenant.id);
    return {
      orphanCharges: rows.map((r) => ({
        pspChargeId: r.psp_charge_id,
        reference: r.reference,
        amount: Number(r.amount),
        currency: r.currency,
        action: r.action,
        detectedAt: r.detected_at.toISOString(),
      })),
    };
  }
}
