import { createHmac, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventType, PayloadOf } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { DEV_PSP_CREDENTIALS, DEV_TENANTS } from '@checkout/service-kit';
import { loadStackConfig, serviceDataSource, waitFor } from '@checkout/testing';

/** Helpers of the payment integration specs: events in through the real outboxes, answers out over HTTP. */
const config = loadStackConfig();
export const PAYMENT = `http://127.0.0.1:${config.servicePorts.payment}`;
export const PSP = `http://127.0.0.1:${config.servicePorts['psp-simulator']}`;
/** The payment service's /metrics and /health (its internal port). */
export const PAYMENT_INTERNAL = `http://127.0.0.1:${config.internalPorts.payment}`;

/** A dev seed tenant with its PSP account: the public id, the secret key (PSP calls only), the webhook secret. */
const seedTenant = (i: number) => ({
  ...DEV_TENANTS[i],
  pspAccount: DEV_PSP_CREDENTIALS[i].accountId,
  pspSecretKey: DEV_PSP_CREDENTIALS[i].secretKey,
  webhookSecret: DEV_PSP_CREDENTIALS[i].webhookSecret,
});
export const ACME = seedTenant(0);
export const GLOBEX = seedTenant(1);

/** A payment as GET /v1/payments shows it. */
export interface PaymentView {
  paymentId: string;
  state: string;
  pspReference: string | null;
  /** Charge requests sent to the PSP for this attempt. */
  chargeRequests: number;
  history: { from: string; to: string; source: string; pspEventId: string | null }[];
  refund: { refundId: string; state: string; attempts: number; lastError: string | null } | null;
}

/** The simulator's ledger of one reference. */
export interface Ledger {
  charges: { id: string; status: string; refunded: boolean; metadata: Record<string, string> }[];
  refunds: { id: string; charge: string; amount: number }[];
  events: { id: string; type: string; account: string }[];
  deliveries: { eventId: string; status: number | null }[];
}

/** Publishes an event the way its owning service would: an outbox row in a transaction, relayed by Debezium. */
export async function publish<T extends EventType>(
  ds: DataSource,
  aggregateType: string,
  type: T,
  tenantId: string,
  sagaId: string,
  payload: PayloadOf<T>,
): Promise<void> {
  const writer = new OutboxWriter(aggregateType);
  await ds.transaction((tx) => writer.append(tx, { type, tenantId, sagaId, payload }));
}

/** The inventory and order databases, where the events that drive payment come from. */
export async function sources(): Promise<{ inventory: DataSource; order: DataSource; payment: DataSource }> {
  return {
    inventory: await serviceDataSource('inventory_svc', 2),
    order: await serviceDataSource('order_svc', 2),
    payment: await serviceDataSource('payment_svc', 4),
  };
}

/** Reserves an order for payment with the given token: inventory.reserved through the inventory outbox. */
export async function reserve(
  inventory: DataSource,
  token: string,
  tenantId = 'acme',
  amount = 50_000,
): Promise<string> {
  const orderId = randomUUID();
  await publish(inventory, 'inventory', 'inventory.reserved', tenantId, orderId, {
    orderId,
    lines: [{ sku: 'SKU-PAY', quantity: 1 }],
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
    customerId: 'c-pay',
    amount,
    currency: 'VND',
    paymentToken: token,
  });
  return orderId;
}

/** The order's payments as the tenant sees them. */
export async function payments(orderId: string, apiKey = 'acme-dev-key'): Promise<PaymentView[]> {
  const res = await fetch(`${PAYMENT}/v1/payments?orderId=${orderId}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (res.status !== 200) throw new Error(`GET /v1/payments answered ${res.status}`);
  return ((await res.json()) as { payments: PaymentView[] }).payments;
}

/** Waits until the order's payment is in `state`; returns it. */
export function paymentIn(
  orderId: string,
  state: string | ((p: PaymentView) => boolean),
  timeoutMs = 30_000,
) {
  const ok = typeof state === 'string' ? (p: PaymentView) => p.state === state : state;
  return waitFor(
    `payment of ${orderId} in ${typeof state === 'string' ? state : 'the expected state'}`,
    async () => {
      const [p] = await payments(orderId);
      return p && ok(p) ? p : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** The simulator's ledger for an order. */
export async function ledger(orderId: string): Promise<Ledger> {
  return (await (await fetch(`${PSP}/v1/_ledger?reference=${orderId}`)).json()) as Ledger;
}

/** A `PSP-Signature` header as the PSP signs a webhook body (t defaults to now). */
export const sign = (secret: string, body: string, t = Math.floor(Date.now() / 1000)) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;

/** The trigger of a refund: inventory.unavailable-after-payment through the inventory outbox. */
export const unavailable = (inventory: DataSource, orderId: string, tenantId = 'acme') =>
  publish(inventory, 'inventory', 'inventory.unavailable-after-payment', tenantId, orderId, {
    orderId,
    lines: [{ sku: 'SKU-PAY', quantity: 1 }],
    shortSkus: ['SKU-PAY'],
  });
