import { z } from 'zod';
import { OrderId, Quantity, Sku } from '../primitives';
import { ServiceApi } from './api';
import { Instant, OrderQuery } from './common';

/** Statuses of a shipment. */
export const SHIPMENT_STATUSES = ['created', 'failed', 'cancelled'] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/** Kinds of email sent to a customer. */
export const NOTIFICATION_KINDS = ['order_confirmation', 'payment_failed', 'out_of_stock_apology'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** One shipment of an order. */
export const ShipmentView = z
  .object({
    shipmentId: z.uuid(),
    orderId: OrderId,
    customerId: z.string(),
    status: z.enum(SHIPMENT_STATUSES),
    carrier: z.string(),
    trackingNumber: z.string().nullable(),
    lines: z.array(z.object({ sku: Sku, quantity: Quantity })),
    failureReason: z.string().nullable(),
    cancelReason: z.string().nullable(),
    createdAt: Instant,
    updatedAt: Instant,
    cancelledAt: Instant.nullable(),
  })
  .meta({ id: 'ShipmentView' });
export type ShipmentView = z.infer<typeof ShipmentView>;

/** `GET /v1/shipments?orderId=`: empty for an order not shipped yet, or another tenant's. */
export const ShipmentsView = z
  .object({ orderId: OrderId, shipments: z.array(ShipmentView) })
  .meta({ id: 'ShipmentsView' });
export type ShipmentsView = z.infer<typeof ShipmentsView>;

/** One email recorded for the order's customer, pending or sent. */
export const NotificationView = z
  .object({
    notificationId: z.uuid(),
    orderId: OrderId,
    kind: z.enum(NOTIFICATION_KINDS),
    customerId: z.string().nullable(),
    subject: z.string().min(1),
    body: z.string().min(1),
    voucherCode: z.string().nullable(),
    status: z.enum(['pending', 'sent']),
    createdAt: Instant,
    sentAt: Instant.nullable(),
  })
  .meta({ id: 'NotificationView' });
export type NotificationView = z.infer<typeof NotificationView>;

/** `GET /v1/notifications?orderId=`: empty for an order with no email yet, or another tenant's. */
export const NotificationsView = z
  .object({ orderId: OrderId, notifications: z.array(NotificationView) })
  .meta({ id: 'NotificationsView' });
export type NotificationsView = z.infer<typeof NotificationsView>;

/** The fulfillment service's public API: shipments and customer emails per order. */
export const FULFILLMENT_API: ServiceApi = {
  service: 'fulfillment',
  title: 'checkout-saga fulfillment API',
  description:
    "An order's shipments and the emails sent to its customer. Another tenant's order answers an empty list, like an order with nothing yet. Errors as { error, message, ...details } (docs/api.md).",
  database: true,
  endpoints: [
    {
      method: 'get',
      path: '/v1/shipments',
      summary: "The order's shipments.",
      query: OrderQuery,
      ok: { status: 200, description: 'The shipments.', schema: ShipmentsView },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'get',
      path: '/v1/notifications',
      summary: "The emails recorded for the order's customer, pending and sent.",
      query: OrderQuery,
      ok: { status: 200, description: 'The notifications.', schema: NotificationsView },
      errors: ['VALIDATION_FAILED'],
    },
  ],
};
