import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { EntityManager } from 'typeorm';
import { PayloadOf, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import {
  PaymentRow,
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
    const row = result.row;
    this.logMove(row, result.from, request.source);
    if (row.state === 'succeeded') await this.succeeded(tx, row, request);
    if (row.state === 'failed') {
      await this.publish(
        tx,
        row,
        'payment.failed',
        {
          orderId: row.order_id,
          paymentId: row.id,
          reason: (row.failure_reason ?? 'declined').slice(0, 255),
          source: eventSource(request.source),
        },
        request.source,
      );
    }
    return result;
  }

  /** Claims up to `limit` new attempts for the charge worker (`created -> pending`); returns them. */
  async claimNew(q: Pick<EntityManager, 'query'>, limit: number): Promise<PaymentRow[]> {
    const claimed = await claimNewAttempts(q, limit);
    return claimed.map(({ from_state: from, ...row }) => {
      this.metrics.transitions.inc({ to: 'pending', source: 'charge', outcome: 'applied' });
      this.logMove(row, from, 'charge');
      return row;
    });
  }

  private logMove(row: PaymentRow, from: PaymentState, source: TransitionSource): void {
    this.logger.info(
      { paymentId: row.id, orderId: row.order_id, tenantId: row.tenant_id, from, to: row.state, source },
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
    row: PaymentRow,
    type: T,
    payload: PayloadOf<T>,
    source: TransitionSource,
  ) {
    const outsideTheSaga = source === 'webhook' || source === 'reconciliation';
    return this.outbox.append(tx, {
      type,
      tenantId: row.tenant_id,
      sagaId: row.order_id,
      cause: asCause(row.cause),
      traceparent: outsideTheSaga ? (row.cause?.traceparent ?? undefined) : undefined,
      payload,
    });
  }

  private async succeeded(tx: EntityManager, row: PaymentRow, request: TransitionRequest): Promise<void> {
    await this.publish(
      tx,
      row,
      'payment.succeeded',
      {
        orderId: row.order_id,
        paymentId: row.id,
        amount: Number(row.amount),
        currency: row.currency,
        pspReference: row.psp_ref,
        source: eventSource(request.source),
        succeededAt: new Date().toISOString(),
      },
      request.source,
    );
    if (row.refund_on_success && row.psp_ref) {
      // The order was cancelled while the money's fate was unknown: compensate forward, never rewrite history.
      await insertRefund(tx, {
        id: randomUUID(),
        tenantId: row.tenant_id,
        orderId: row.order_id,
        paymentId: row.id,
        pspAccount: row.psp_account,
        pspChargeId: row.psp_ref,
        amount: Number(row.amount),
        currency: row.currency,
        reason: row.refund_on_success,
        cause: row.cause,
      });
    }
  }
}
