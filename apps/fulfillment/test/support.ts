import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventType, OrderPaidV1, PayloadOf, PaymentRefundedV1, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { loadStackConfig, serviceDataSource, waitFor } from '@checkout/testing';

/** Base URL of the running fulfillment service. */
export const FULFILLMENT_URL = `http://127.0.0.1:${loadStackConfig().servicePorts.fulfillment}`;

/** Dev API keys of the seeded tenants. */
export const ACME_KEY = 'acme-dev-key';
export const GLOBEX_KEY = 'globex-dev-key';

/** A value no other spec or run uses. */
export const unique = (name: string): string => `${name}-${randomBytes(4).toString('hex')}`;

/** An order.paid payload of tenant acme with sensible defaults. */
export function orderPaid(overrides: Partial<OrderPaidV1> = {}): OrderPaidV1 {
  const lines = overrides.lines ?? [
    { sku: unique('IT-FUL'), quantity: 2, unitPrice: 25_000, discount: 0, lineTotal: 50_000 },
  ];
  const subtotal = lines.reduce((s, l) => s + l.unitPrice * l.quantity, 0);
  const discount = lines.reduce((s, l) => s + l.discount, 0);
  return {
    orderId: randomUUID(),
    tenantId: 'acme',
    customerId: unique('it-customer'),
    currency: 'VND',
    lines,
    subtotal,
    discount,
    total: subtotal - discount,
    voucherCode: null,
    paymentId: randomUUID(),
    pspReference: unique('ch'),
    paidAt: new Date().toISOString(),
    ...overrides,
  };
}

/** The payment.refunded payload of the whole of a paid order. */
export const refundOf = (paid: OrderPaidV1, reason: string): PaymentRefundedV1 => ({
  orderId: paid.orderId,
  paymentId: paid.paymentId,
  amount: paid.total,
  currency: paid.currency,
  pspRefundId: unique('re'),
  reason,
});

/** The databases of the services whose outboxes the specs publish from, as those services would. */
export class Publishers {
  private constructor(private readonly sources: Record<'order' | 'payment' | 'inventory', DataSource>) {}

  static async open(): Promise<Publishers> {
    const [order, payment, inventory] = await Promise.all([
      serviceDataSource('order_svc', 3),
      serviceDataSource('payment_svc', 3),
      serviceDataSource('inventory_svc', 3),
    ]);
    return new Publishers({ order, payment, inventory });
  }

  /** Publishes one event through the outbox of the service that owns it, in a transaction. */
  async publish<T extends EventType>(
    from: 'order' | 'payment' | 'inventory',
    type: T,
    payload: PayloadOf<T>,
    { tenantId = 'acme', sagaId }: { tenantId?: string; sagaId?: string } = {},
  ): Promise<SagaEvent<T>> {
    const orderId = (payload as { orderId: string }).orderId;
    return this.sources[from].transaction((tx) =>
      new OutboxWriter(from).append(tx, { type, tenantId, sagaId: sagaId ?? orderId, payload }),
    );
  }

  /** Inserts an outbox row as is, without the writer's validation: how a buggy producer publishes. */
  async publishRaw(from: 'order', envelope: Record<string, unknown>): Promise<void> {
    await this.sources[from].query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id,
                           causation_id, traceparent, sequence, payload, occurred_at)
       VALUES ($1, $2, $3::text, $4, 1, $5, $3::uuid, $3::text, NULL, NULL, 1, $6, now())`,
      [envelope.eventId, from, envelope.sagaId, envelope.type, envelope.tenantId, JSON.stringify(envelope)],
    );
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.sources).map((ds) => ds.destroy()));
  }
}

/** GET on the fulfillment API with a tenant's key; returns status and JSON body. */
export async function getJson<T = Record<string, unknown>>(
  path: string,
  key: string | null = ACME_KEY,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${FULFILLMENT_URL}${path}`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: AbortSignal.timeout(5_000),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** A shipment as GET /v1/shipments answers it. */
export interface ShipmentView {
  shipmentId: string;
  orderId: string;
  customerId: string;
  status: string;
  carrier: string;
  trackingNumber: string | null;
  lines: { sku: string; quantity: number }[];
  failureReason: string | null;
  cancelReason: string | null;
}

/** A notification as GET /v1/notifications answers it. */
export interface NotificationView {
  notificationId: string;
  orderId: string;
  kind: string;
  customerId: string | null;
  subject: string;
  body: string;
  voucherCode: string | null;
  status: string;
  sentAt: string | null;
}

export const shipmentsOf = async (orderId: string, key = ACME_KEY) =>
  (await getJson<{ shipments: ShipmentView[] }>(`/v1/shipments?orderId=${orderId}`, key)).body.shipments;

export const notificationsOf = async (orderId: string, key = ACME_KEY) =>
  (await getJson<{ notifications: NotificationView[] }>(`/v1/notifications?orderId=${orderId}`, key)).body
    .notifications;

/** Waits until the API shows a shipment of the order matching the predicate. */
export const shipmentWhere = (orderId: string, ok: (s: ShipmentView) => boolean, what = 'shipment') =>
  waitFor(`${what} of ${orderId}`, async () => (await shipmentsOf(orderId)).find(ok), { timeoutMs: 30_000 });

/** Waits until the API shows a sent notification of this kind for the order. */
export const sentNotification = (orderId: string, kind: string) =>
  waitFor(
    `sent ${kind} notification of ${orderId}`,
    async () => (await notificationsOf(orderId)).find((n) => n.kind === kind && n.status === 'sent'),
    { timeoutMs: 30_000 },
  );

/** The fulfillment service's own database: to see which events its consumer has applied. */
export const fulfillmentDb = () => serviceDataSource('fulfillment_svc', 3);

/** Waits until the fulfillment consumer has applied (or skipped as duplicate) each of these events. */
export async function consumed(fulfillment: DataSource, ...events: SagaEvent[]): Promise<void> {
  const ids = events.map((e) => e.eventId);
  await waitFor(
    `fulfillment to apply ${ids.join(', ')}`,
    async () => {
      const [{ n }] = await fulfillment.query(
        `SELECT count(*)::int AS n FROM inbox WHERE consumer = 'fulfillment' AND event_id = ANY($1::uuid[])`,
        [ids],
      );
      return n === ids.length;
    },
    { timeoutMs: 30_000 },
  );
}

/** Events the fulfillment outbox holds for an order, by type. */
export async function fulfillmentEventsOf(fulfillment: DataSource, orderId: string): Promise<string[]> {
  const rows: { type: string }[] = await fulfillment.query(
    `SELECT type FROM outbox WHERE saga_id = $1 ORDER BY sequence`,
    [orderId],
  );
  return rows.map((r) => r.type);
}
