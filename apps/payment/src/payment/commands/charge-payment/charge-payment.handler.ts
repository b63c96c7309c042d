import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { withSpanOf } from '@checkout/tracing';
import { PaymentAttempt, countChargeRequest, noteError, notePspRef } from '../../database/payment.repository';
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

  /**
   * Charges (or re-asks, same key) and applies what the PSP said. The request is counted first, unless the claim
   * that handed the attempt over counted it already (`counted`: the charge worker's claim does, in its statement).
   */
  async execute(attempt: PaymentAttempt, { counted = false } = {}): Promise<PspResult<PspCharge>> {
    // In the trace of the event that started the payment: the PSP's side of the charge and what the answer
    // publishes belong to the saga's trace, though the worker picks the attempt up outside that event's span.
    return withSpanOf(attempt.cause.traceparent, 'payment charge', spanAttributes(attempt), async () => {
      if (!counted) await countChargeRequest(this.dataSource, attempt.id);
      const result = await this.psp.charge(attempt.pspAccount, attempt.idempotencyKey, {
        amount: Number(attempt.amount),
        currency: attempt.currency,
        token: attempt.paymentToken,
        reference: attempt.orderId,
        metadata: { paymentId: attempt.id, tenantId: attempt.tenantId },
      });
      await this.apply(attempt, result, 'response');
      return result;
    });
  }

  /** Applies a charge's answer (or its absence) through the state machine. */
  async apply(
    attempt: PaymentAttempt,
    result: PspResult<PspCharge>,
    source: TransitionSource,
  ): Promise<void> {
    const base = { paymentId: attempt.id, tenantId: attempt.tenantId, source };
    await this.dataSource.transaction(async (tx) => {
      if (result.kind === 'unavailable') {
        await this.move.execute(tx, {
          ...base,
          to: 'unknown',
          detail: result.reason,
          lastError: result.reason,
        });
        return;
      }
      if (result.kind === 'rejected') {
        if (result.status === 422) {
          // Our own key misuse: the PSP did not tell us what happened to the money, so do not guess.
          await this.move.execute(tx, {
            ...base,
            to: 'unknown',
            detail: result.code,
            lastError: `${result.code}: ${result.message}`,
          });
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
      if (charge.status === 'succeeded')
        await this.move.execute(tx, { ...base, to: 'succeeded', pspRef: charge.id, lastError: null });
      else if (charge.status === 'failed')
        await this.move.execute(tx, {
          ...base,
          to: 'failed',
          pspRef: charge.id,
          failureReason: charge.failureCode ?? 'declined',
          lastError: null,
        });
      else {
        await noteError(tx, attempt.id, null);
        await notePspRef(tx, attempt.id, charge.id);
      }
    });
  }
}

/** What a charge's span says about it. */
const spanAttributes = (attempt: PaymentAttempt) => ({
  'saga.id': attempt.orderId,
  'tenant.id': attempt.tenantId,
  'payment.id': attempt.id,
});
