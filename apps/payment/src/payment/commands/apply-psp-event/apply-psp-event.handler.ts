import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { z } from 'zod';
import {
  PSP_CHARGE_EVENTS,
  PSP_REFUND_EVENTS,
  PspChargeEvent,
  PspRefundEvent,
  PspWebhookEvent,
} from '@checkout/contracts';
import {
  findAttemptForCharge,
  findRefundForPspRefund,
  insertPspEvent,
  isUuid,
  notePspEventOutcome,
} from '../../database/payment.repository';
import { PaymentMetrics } from '../../payment.metrics';
import { MovePaymentHandler } from '../move-payment/move-payment.handler';
import { SettleRefundHandler } from '../settle-refund/settle-refund.handler';

/** A PSP webhook event as we accept it (the contract: PspWebhookEvent in libs/contracts/src/http/payment.ts). */
export type PspEvent = PspWebhookEvent;
type ChargeEvent = z.infer<typeof PspChargeEvent>;
type RefundEvent = z.infer<typeof PspRefundEvent>;

const isChargeEvent = (e: PspEvent): e is ChargeEvent =>
  (PSP_CHARGE_EVENTS as readonly string[]).includes(e.type);
const isRefundEvent = (e: PspEvent): e is RefundEvent =>
  (PSP_REFUND_EVENTS as readonly string[]).includes(e.type);

/** What one webhook delivery did. */
export type PspEventOutcome = 'applied' | 'ignored' | 'duplicate' | 'unmatched';

/** What one webhook delivery did, and whether it reported money that no payment of ours holds. */
export interface PspEventApplied {
  outcome: PspEventOutcome;
  /**
   * A captured charge (`charge.succeeded`) that no attempt took (`unmatched`), or that the attempt it names did
   * not take (`ignored`: it holds another charge, or failed): the orphan sweep should look. False for the common
   * late webhook about the charge whose answer was already applied.
   */
  unaccountedCharge: boolean;
}

interface Applied {
  outcome: PspEventOutcome;
  paymentId: string | null;
  /** The attempt holds this very charge already (only for charge events). */
  holdsCharge?: boolean;
}

/**
 * ApplyPspEvent: in one transaction, record the PSP event id (a redelivery stops here) and apply what the event
 * says through the state machines of the tenant's payment or refund; anything stale is ignored (a `failed`
 * after `succeeded`), anything about a charge or refund that is not this tenant's changes nothing (`unmatched`).
 */
@Injectable()
export class ApplyPspEventHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly move: MovePaymentHandler,
    private readonly settleRefund: SettleRefundHandler,
    private readonly metrics: PaymentMetrics,
  ) {}

  async execute(tenantId: string, event: PspEvent): Promise<PspEventApplied> {
    const applied = await this.dataSource.transaction(async (tx): Promise<Applied> => {
      const chargeId = isRefundEvent(event) ? event.data.object.charge : event.data.object.id;
      const fresh = await insertPspEvent(tx, { eventId: event.id, tenantId, type: event.type, chargeId });
      if (!fresh) return { outcome: 'duplicate', paymentId: null };
      // The tenant comes from the verified signature: another tenant's payment or refund is never found here.
      const result: Applied = isChargeEvent(event)
        ? await this.applyCharge(tx, tenantId, event)
        : isRefundEvent(event)
          ? await this.applyRefund(tx, tenantId, event)
          : { outcome: 'ignored', paymentId: null };
      await notePspEventOutcome(tx, {
        eventId: event.id,
        tenantId,
        outcome: result.outcome,
        paymentId: result.paymentId,
      });
      return result;
    });
    const { outcome } = applied;
    this.metrics.webhooks.inc({ outcome });
    const unaccountedCharge =
      event.type === 'charge.succeeded' &&
      (outcome === 'unmatched' || (outcome === 'ignored' && applied.holdsCharge !== true));
    return { outcome, unaccountedCharge };
  }

  private async applyCharge(tx: EntityManager, tenantId: string, event: ChargeEvent): Promise<Applied> {
    const charge = event.data.object;
    const paymentId = isUuid(charge.metadata.paymentId) ? charge.metadata.paymentId : null;
    const target = await findAttemptForCharge(tx, tenantId, paymentId, charge.id);
    if (!target) return { outcome: 'unmatched', paymentId: null };
    // The common late webhook: the charge's own answer was applied first. The attempt already holds this charge
    // (succeeded, or refunded since), a state no charge event moves: nothing to lock or try.
    if (target.holdsCharge && event.type === 'charge.succeeded') {
      this.metrics.transitions.inc({ to: 'succeeded', source: 'webhook', outcome: 'ignored' });
      return { outcome: 'ignored', paymentId: target.id, holdsCharge: true };
    }
    const moved = await this.move.execute(tx, {
      paymentId: target.id,
      tenantId,
      to: event.type === 'charge.succeeded' ? 'succeeded' : 'failed',
      source: 'webhook',
      pspRef: charge.id,
      failureReason: event.type === 'charge.failed' ? (charge.failureCode ?? 'declined') : null,
      pspEventId: event.id,
    });
    return { outcome: moved.outcome, paymentId: target.id, holdsCharge: target.holdsCharge };
  }

  /**
   * A refund outcome is ours when this tenant asked to refund exactly that charge and amount, and the PSP's
   * refund id is the one it answered us with (if it answered at all).
   */
  private async applyRefund(tx: EntityManager, tenantId: string, event: RefundEvent): Promise<Applied> {
    const r = event.data.object;
    const refund = await findRefundForPspRefund(tx, tenantId, {
      pspChargeId: r.charge,
      amount: r.amount,
      currency: r.currency,
      pspRefundId: r.id,
    });
    if (!refund) return { outcome: 'unmatched', paymentId: null };
    const outcome =
      event.type === 'refund.succeeded'
        ? await this.settleRefund.succeeded(tx, {
            refundId: refund.id,
            pspRefundId: r.id,
            source: 'webhook',
            pspEventId: event.id,
          })
        : await this.settleRefund.failed(tx, {
            refundId: refund.id,
            error: `the PSP failed refund ${r.id}: ${r.failureReason ?? 'no reason given'}`,
            source: 'webhook',
          });
    return { outcome, paymentId: refund.paymentId };
  }
}
