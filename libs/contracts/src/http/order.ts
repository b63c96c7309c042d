import { z } from 'zod';
import { ORDER_STATUSES, PAYMENT_STATES } from '../order-status';
import {
  Currency,
  ExternalId,
  MinorUnits,
  OrderId,
  PricedLine,
  Quantity,
  Sku,
  VoucherCode,
} from '../primitives';
import { ServiceApi } from './api';
import { Count, Instant, OrderIdParam, SkuParam } from './common';

/** `Idempotency-Key` of `POST /v1/checkout`: client-chosen, 1..255 visible ASCII characters. */
export const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1..255 visible ASCII characters');

/** Headers of `POST /v1/checkout`. */
export const CheckoutHeaders = z.object({
  'idempotency-key': IdempotencyKey.meta({
    description:
      'Client-chosen; the same key and body again replay the stored answer (`Idempotent-Replayed: true`).',
  }),
});

/** Body of `POST /v1/checkout`: the server recomputes prices; a line's `unitPrice` is what the shopper saw. */
export const CheckoutRequest = z
  .object({
    customerId: ExternalId(128, 'customerId'),
    currency: Currency,
    lines: z
      .array(z.object({ sku: Sku, quantity: Quantity, unitPrice: MinorUnits.optional() }))
      .min(1)
      .max(100)
      .refine(
        (lines) => new Set(lines.map((l) => l.sku)).size === lines.length,
        'each SKU may appear on one line only',
      )
      .meta({ description: 'One line per SKU.' }),
    voucherCode: VoucherCode.optional(),
    payment: z.object({ token: ExternalId(128, 'payment.token') }),
  })
  .meta({ id: 'CheckoutRequest' });
export type CheckoutRequest = z.infer<typeof CheckoutRequest>;

/** 202 of `POST /v1/checkout`: accepted; the saga goes on asynchronously. */
export const CheckoutAccepted = z
  .object({ orderId: OrderId, status: z.literal('PENDING') })
  .meta({ id: 'CheckoutAccepted' });
export type CheckoutAccepted = z.infer<typeof CheckoutAccepted>;

const OrderStatus = z.enum(ORDER_STATUSES);

/** One status change of an order; `eventId` is the event that caused it (null for the checkout itself). */
export const OrderHistoryEntry = z
  .object({
    from: OrderStatus.nullable(),
    to: OrderStatus,
    cause: z.string(),
    eventId: z.uuid().nullable(),
    at: Instant,
  })
  .meta({ id: 'OrderHistoryEntry' });

/** `GET /v1/orders/{orderId}`: status, payment state, snapshotted lines and the status history. */
export const OrderView = z
  .object({
    orderId: OrderId,
    status: OrderStatus,
    customerId: z.string().min(1),
    lines: z.array(PricedLine).min(1),
    subtotal: MinorUnits,
    discount: MinorUnits,
    total: MinorUnits,
    currency: Currency,
    voucherCode: z.string().nullable(),
    paymentState: z.enum(PAYMENT_STATES).nullable(),
    createdAt: Instant,
    updatedAt: Instant,
    history: z.array(OrderHistoryEntry).min(1),
  })
  .meta({ id: 'OrderView' });
export type OrderView = z.infer<typeof OrderView>;

/** 202 of `POST /v1/orders/{orderId}/cancel` (also for an order cancelled already). */
export const CancelAccepted = z
  .object({ orderId: OrderId, status: z.literal('CANCELLED') })
  .meta({ id: 'CancelAccepted' });
export type CancelAccepted = z.infer<typeof CancelAccepted>;

/** Body of `PUT /v1/admin/prices/{sku}`. */
export const PutPriceRequest = z
  .object({ unitPrice: MinorUnits, currency: Currency })
  .meta({ id: 'PutPriceRequest' });

/** 200 of `PUT /v1/admin/prices/{sku}`. */
export const PriceView = z
  .object({ sku: Sku, unitPrice: MinorUnits, currency: Currency, updatedAt: Instant })
  .meta({ id: 'PriceView' });
export type PriceView = z.infer<typeof PriceView>;

/** Body of `POST /v1/admin/vouchers`. */
export const CreateVoucherRequest = z
  .object({
    code: VoucherCode,
    percentOff: z.number().int().min(1).max(100),
    maxRedemptions: z.number().int().min(1).max(100_000_000),
  })
  .meta({ id: 'CreateVoucherRequest' });

/** 201 of `POST /v1/admin/vouchers`: the new voucher, nothing redeemed yet. */
export const VoucherCreated = z
  .object({
    code: VoucherCode,
    percentOff: z.number().int().min(1).max(100),
    maxRedemptions: z.number().int().min(1),
    redeemed: z.literal(0),
  })
  .meta({ id: 'VoucherCreated' });

/** Body of `PUT /v1/admin/flash-sales/{sku}`: the gate on (primed from inventory, or `available`) or off. */
export const PutFlashSaleRequest = z
  .object({
    enabled: z.boolean(),
    available: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .optional()
      .meta({ description: 'Units to prime the gate with; omitted: inventory is asked.' }),
  })
  .meta({ id: 'PutFlashSaleRequest' });

/** 200 of `PUT /v1/admin/flash-sales/{sku}`. */
export const FlashSaleView = z
  .object({
    sku: Sku,
    enabled: z.boolean(),
    available: Count.nullable().meta({ description: 'Units the gate was primed with; null when off.' }),
    source: z.enum(['inventory', 'override']),
    updatedAt: Instant,
  })
  .meta({ id: 'FlashSaleView' });
export type FlashSaleView = z.infer<typeof FlashSaleView>;

/** The order service's public API: checkout, the order view and cancel, the merchant's admin API. */
export const ORDER_API: ServiceApi = {
  service: 'order',
  title: 'checkout-saga order API',
  description:
    'Checkout, the order view and cancel, and the merchant admin API (prices, vouchers, flash sales). Money in integer minor units with an ISO 4217 currency; errors as { error, message, ...details } (docs/api.md).',
  database: true,
  endpoints: [
    {
      method: 'post',
      path: '/v1/checkout',
      summary: 'Places an order: 202 with its id; the saga goes on asynchronously.',
      description:
        'The server recomputes prices, applies the voucher and snapshots them into the order lines. The same Idempotency-Key and body again replay the stored answer with `Idempotent-Replayed: true`.',
      headers: CheckoutHeaders,
      body: CheckoutRequest,
      ok: {
        status: 202,
        description: 'Accepted: the order is PENDING.',
        schema: CheckoutAccepted,
        headers: {
          'Idempotent-Replayed': {
            description:
              '`true` when this is the stored answer of an earlier request with the same key and body.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
      errors: [
        'VALIDATION_FAILED',
        'UNKNOWN_SKU',
        'UNKNOWN_VOUCHER',
        'OUT_OF_STOCK',
        'PRICE_CHANGED',
        'VOUCHER_EXHAUSTED',
        'IDEMPOTENCY_KEY_IN_USE',
        'IDEMPOTENCY_KEY_REUSED',
        'ORDER_TOTAL_TOO_LARGE',
        'ZERO_TOTAL',
        'GATE_TIMEOUT',
      ],
    },
    {
      method: 'get',
      path: '/v1/orders/{orderId}',
      summary: 'The order: status, payment state, snapshotted lines and status history.',
      params: OrderIdParam,
      ok: { status: 200, description: 'The order.', schema: OrderView },
      errors: ['ORDER_NOT_FOUND'],
    },
    {
      method: 'post',
      path: '/v1/orders/{orderId}/cancel',
      summary: "Cancels an order before its payment succeeded (the customer's cancel).",
      params: OrderIdParam,
      ok: { status: 202, description: 'Cancelled (or cancelled already).', schema: CancelAccepted },
      errors: ['ORDER_NOT_FOUND', 'ORDER_NOT_CANCELLABLE'],
    },
    {
      method: 'put',
      path: '/v1/admin/prices/{sku}',
      summary: "Sets a SKU's price for this tenant.",
      params: SkuParam,
      body: PutPriceRequest,
      ok: { status: 200, description: 'The price now in force.', schema: PriceView },
      errors: ['PRICE_OUT_OF_RANGE'],
    },
    {
      method: 'post',
      path: '/v1/admin/vouchers',
      summary: 'Creates a voucher with a limited number of redemptions.',
      body: CreateVoucherRequest,
      ok: { status: 201, description: 'The voucher.', schema: VoucherCreated },
      errors: ['VOUCHER_EXISTS'],
    },
    {
      method: 'put',
      path: '/v1/admin/flash-sales/{sku}',
      summary: "Turns a SKU's flash-sale gate on (primed from inventory, or with `available`) or off.",
      params: SkuParam,
      body: PutFlashSaleRequest,
      ok: { status: 200, description: 'The flash sale now in force.', schema: FlashSaleView },
      errors: ['UNKNOWN_SKU', 'INVENTORY_UNAVAILABLE', 'GATE_UNAVAILABLE'],
    },
  ],
};
