import { z } from 'zod';
import { PAYMENT_STATES } from '../order-status';
import { Currency, MinorUnits, OrderId } from '../primitives';
import { ServiceApi } from './api';
import { Count, Instant } from './common';

/** States of a refund: retried while `pending`, parked as `refund_failed` for an operator. */
export const REFUND_STATES = ['pending', 'succeeded', 'refund_failed'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

/** `?orderId=` of `GET /v1/payments` (other query parameters are ignored). */
export const PaymentsQuery = z.object({ orderId: OrderId });

/** `?state=` of `GET /v1/payments/refunds`. */
export const RefundsQuery = z.object({ state: z.enum(REFUND_STATES).optional() });

/** One refund as the payment API answers it. */
export const RefundView = z
  .object({
    refundId: z.uuid(),
    orderId: OrderId,
    paymentId: z.uuid().nullable(),
    pspChargeId: z.string(),
    amount: MinorUnits.positive(),
    currency: Currency,
    reason: z.string(),
    state: z.enum(REFUND_STATES),
    attempts: Count,
    lastError: z.string().nullable(),
    pspRefundId: z.string().nullable(),
    createdAt: Instant,
    updatedAt: Instant,
  })
  .meta({ id: 'RefundView' });
export type RefundView = z.infer<typeof RefundView>;

/** One state transition of a payment attempt, oldest first (e.g. pending -> unknown on a PSP timeout). */
export const PaymentTransitionView = z
  .object({
    from: z.string(),
    to: z.string(),
    source: z.string(),
    pspEventId: z.string().nullable(),
    detail: z.string().nullable(),
    at: Instant,
  })
  .meta({ id: 'PaymentTransitionView' });

/** One payment attempt with its history and refund. */
export const PaymentView = z
  .object({
    paymentId: z.uuid(),
    orderId: OrderId,
    state: z.enum(PAYMENT_STATES),
    amount: MinorUnits.positive(),
    currency: Currency,
    pspReference: z.string().nullable(),
    failureReason: z.string().nullable(),
    refundOnSuccess: z.string().nullable(),
    chargeRequests: Count,
    lastError: z.string().nullable(),
    createdAt: Instant,
    updatedAt: Instant,
    history: z.array(PaymentTransitionView),
    refund: RefundView.nullable(),
  })
  .meta({ id: 'PaymentView' });
export type PaymentView = z.infer<typeof PaymentView>;

/** `GET /v1/payments?orderId=`: the order's payment attempts (empty for an unknown or another tenant's order). */
export const PaymentsView = z
  .object({ orderId: OrderId, payments: z.array(PaymentView) })
  .meta({ id: 'PaymentsView' });
export type PaymentsView = z.infer<typeof PaymentsView>;

/** `GET /v1/payments/refunds`. */
export const RefundsView = z.object({ refunds: z.array(RefundView) }).meta({ id: 'RefundsView' });
export type RefundsView = z.infer<typeof RefundsView>;

/** `GET /v1/payments/orphan-charges`: captured PSP charges that had no succeeded payment of ours. */
export const OrphanChargesView = z
  .object({
    orphanCharges: z.array(
      z.object({
        pspChargeId: z.string(),
        reference: z.string(),
        amount: MinorUnits,
        currency: Currency,
        action: z.string(),
        detectedAt: Instant,
      }),
    ),
  })
  .meta({ id: 'OrphanChargesView' });
export type OrphanChargesView = z.infer<typeof OrphanChargesView>;

/** PSP charge events the payment service acts on. */
export const PSP_CHARGE_EVENTS = ['charge.succeeded', 'charge.failed'] as const;
/** PSP refund events the payment service acts on. */
export const PSP_REFUND_EVENTS = ['refund.succeeded', 'refund.failed'] as const;
const KNOWN_PSP_EVENTS: readonly string[] = [...PSP_CHARGE_EVENTS, ...PSP_REFUND_EVENTS];

const pspEnvelope = {
  id: z.string().min(1).max(128),
  created: z.number().int().min(0),
  account: z.string().min(1).max(128),
};
/** A PSP charge event. */
export const PspChargeEvent = z.object({
  ...pspEnvelope,
  type: z.enum(PSP_CHARGE_EVENTS),
  data: z.object({
    object: z.object({
      id: z.string().min(1).max(128),
      reference: z.string().min(1).max(128),
      status: z.enum(['pending', 'succeeded', 'failed']),
      failureCode: z.string().max(128).nullable().optional(),
      metadata: z.record(z.string(), z.string()).default({}),
    }),
  }),
});
/** A PSP refund event. */
export const PspRefundEvent = z.object({
  ...pspEnvelope,
  type: z.enum(PSP_REFUND_EVENTS),
  data: z.object({
    object: z.object({
      id: z.string().min(1).max(128),
      charge: z.string().min(1).max(128),
      amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
      currency: Currency,
      status: z.enum(['pending', 'succeeded', 'failed']),
      failureReason: z.string().max(255).nullable().optional(),
    }),
  }),
});
// Event types we do not act on are acknowledged (and deduped) rather than refused: a 4xx would be redelivered.
const PspOtherEvent = z.object({
  ...pspEnvelope,
  type: z
    .string()
    .min(1)
    .max(64)
    .refine((t) => !KNOWN_PSP_EVENTS.includes(t), 'a known event type with a malformed body'),
  data: z.object({ object: z.object({ id: z.string().min(1).max(128) }) }),
});

/** Body of `POST /v1/psp/webhooks`: charge and refund outcomes in full, any other type by its envelope. */
export const PspWebhookEvent = z
  .union([PspChargeEvent, PspRefundEvent, PspOtherEvent])
  .meta({ id: 'PspWebhookEvent' });
export type PspWebhookEvent = z.infer<typeof PspWebhookEvent>;

/** Headers of `POST /v1/psp/webhooks`. */
export const PspWebhookHeaders = z.object({
  'psp-signature': z.string().meta({
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body" with the tenant\'s webhook secret>',
  }),
});

/** 200 of `POST /v1/psp/webhooks`: what the delivery did (a redelivery is `duplicate`). */
export const WebhookReceived = z
  .object({ received: z.literal(true), outcome: z.enum(['applied', 'ignored', 'duplicate', 'unmatched']) })
  .meta({ id: 'WebhookReceived' });
export type WebhookReceived = z.infer<typeof WebhookReceived>;

/** Path of `POST /v1/payments/refunds/{refundId}/retry`. */
export const RefundIdParam = z.object({ refundId: z.uuid() });

/** The payment service's public API: payments and refunds per order, the operator's queues, PSP webhooks. */
export const PAYMENT_API: ServiceApi = {
  service: 'payment',
  title: 'checkout-saga payment API',
  description:
    "The tenant's payment attempts with their state history, refunds (parked ones for an operator), orphaned charges, and the PSP's signed webhooks. Errors as { error, message, ...details } (docs/api.md).",
  database: true,
  endpoints: [
    {
      method: 'get',
      path: '/v1/payments',
      summary: "The order's payment attempts with state, history and refund.",
      query: PaymentsQuery,
      ok: { status: 200, description: 'The payments (none for an unknown order).', schema: PaymentsView },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'get',
      path: '/v1/payments/refunds',
      summary: "The tenant's refunds, e.g. `?state=refund_failed` for the operator's queue.",
      query: RefundsQuery,
      ok: { status: 200, description: 'Up to 500 refunds, newest first.', schema: RefundsView },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'post',
      path: '/v1/payments/refunds/{refundId}/retry',
      summary: 'Sends a parked refund back to the retry queue (same idempotency key: still at most once).',
      params: RefundIdParam,
      ok: { status: 202, description: 'The refund, pending again.', schema: RefundView },
      errors: ['VALIDATION_FAILED', 'REFUND_NOT_PARKED'],
    },
    {
      method: 'get',
      path: '/v1/payments/orphan-charges',
      summary: 'Captured PSP charges that had no succeeded payment of ours, as the orphan sweep found them.',
      ok: {
        status: 200,
        description: 'Up to 500 orphaned charges, newest first.',
        schema: OrphanChargesView,
      },
      errors: [],
    },
    {
      method: 'post',
      path: '/v1/psp/webhooks',
      summary: 'Receives a PSP event: signature checked, applied once (deduped by PSP event id).',
      description:
        'Authenticated by `PSP-Signature` with the webhook secret of the account the body names, not by a tenant key. Every failure before the signature verifies is the same 401.',
      auth: false,
      headers: PspWebhookHeaders,
      body: PspWebhookEvent,
      ok: { status: 200, description: 'Received; what it did.', schema: WebhookReceived },
      errors: ['WEBHOOK_UNAUTHENTICATED'],
    },
  ],
};
