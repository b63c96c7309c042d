import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { EntityManager } from 'typeorm';
import { PayloadOf, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import {
  PaymentAttempt,
  StoredCause,
  TransitionRequest,
  TransitionResult,
  claimNewAttempts,
  insertRefund,
  transition,
} from '../../database/payment.repository';
import { PaymentState, TransitionSource } from '../../domain/payment-state';
import { PaymentMetrics } from '../../payment.metrics';

/** The stored cause as the outbox writer wants it (it reads eventId, correlationId and traceparent only). */
export const asCause = (cause: StoredCause | null): SagaEvent | undefined =>
  cause ? (cause as unknown as SagaEvent) : undefined;

/** Keeps what later events need from the event that caused something. */
export const storeCause = (event: SagaEvent): StoredCause => ({
  eventId: event.eventId,
  correlationId: event.correlationId,
  traceparent: event.traceparent,
});

/** Who told us, as payment.succeeded / payment.failed say it: our own bookkeeping counts as the response. */
const eventSource = (source: TransitionSource): 'webhook' | 'reconciliation' | 'response' =>
  source === 'webhook' || source === 'reconciliation' ? source : 'response';

/**
 * MovePayment: one state machine move and what it causes, in the caller's transaction: the outbox event
 * (payment.succeeded / payment.failed) and, when money arrives for an order cancelled meanwhile, its refund.
 */
@Injectable()
export class MovePaymentHandler {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('MovePayment');
  }

  async execute(tx: EntityManager, request: TransitionRequest): Promise<TransitionResult> {
    const result = await transition(tx, request);
    this.metrics.transitions.inc({ to: request.to, source: request.source, outcome: result.outcome });
    if (result.outcome === 'ignored') return result;
    const payment = result.payment;
    this.logMove(payment, result.from, request.source);
    if (payment.state === 'succeeded') await this.succeeded(tx, payment, request);
    if (payment.state === 'failed') {
      await this.publish(
        tx,
        payment,
        'payment.failed',
        {
          orderId: payment.orderId,
          paymentId: payment.id,
          reason: (payment.failureReason ?? 'declined').slice(0, 255),
          source: eventSource(request.source),
        },
        request.source,
      );
    }
    return result;
  }

  /** Claims up to `limit` new attempts for the charge worker (`created -> pending`); returns them. */
  async claimNew(q: Pick<EntityManager, 'query'>, limit: number): Promise<PaymentAttempt[]> {
    const claimed = await claimNewAttempts(q, limit);
    return claimed.map(({ from, payment }) => {
      this.metrics.transitions.inc({ to: 'pending', source: 'charge', outcome: 'applied' });
      this.logMove(payment, from, 'charge');
      return payment;
    });
  }

  private logMove(payment: PaymentAttempt, from: PaymentState, source: TransitionSource): void {
    this.logger.info(
      {
        paymentId: payment.id,
        orderId: payment.orderId,
        tenantId: payment.tenantId,
        from,
        to: payment.state,
        source,
      },
      'payment moved',
    );
  }

  /**
   * The payment's outcome event, in the transaction of the move, caused by the event that started it. A PSP
   * webhook or the reconciliation job is not part of the saga's trace (the PSP's request starts its own), so
   * the event continues the trace of its cause: one checkout stays one trace across the services.
   */
  private publish<T extends 'payment.succeeded' | 'payment.failed'>(
    tx: EntityManager,
    payment: PaymentAttempt,
    type: T,
    payload: PayloadOf<T>,
    source: TransitionSource,
  ) {
    const outsideTheSaga = source === 'webhook' || source === 'reconciliation';
    return this.outbox.append(tx, {
      type,
      tenantId: payment.tenantId,
      sagaId: payment.orderId,
      cause: asCause(payment.cause),
      traceparent: outsideTheSaga ? (payment.cause?.traceparent ?? undefined) : undefined,
      payload,
    });
  }

  private async succeeded(
    tx: EntityManager,
    payment: PaymentAttempt,
    request: TransitionRequest,
  ): Promise<void> {
    await this.publish(
      tx,
      payment,
      'payment.succeeded',
      {
        orderId: payment.orderId,
        paymentId: payment.id,
        amount: Number(payment.amount),
        currency: payment.currency,
        pspReference: payment.pspRef,
        source: eventSource(request.source),
        succeededAt: new Date().toISOString(),
      },
      request.source,
    );
    if (payment.refundOnSuccess && payment.pspRef) {
      // The order was cancelled while the money's fate was unknown: compensate forward, never rewrite history.
      await insertRefund(tx, {
        id: randomUUID(),
        tenantId: payment.tenantId,
        orderId: payment.orderId,
        paymentId: payment.id,
        pspAccount: payment.pspAccount,
        pspChargeId: payment.pspRef,
        amount: Number(payment.amount),
        currency: payment.currency,
        reason: payment.refundOnSuccess,
        cause: payment.cause,
      });
    }
  }
}
