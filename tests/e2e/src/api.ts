import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  CheckoutAccepted,
  CheckoutRequest,
  FlashSaleView,
  LedgerView,
  NotificationsView,
  OrderView,
  PaymentsView,
  PriceView,
  RefundView,
  RefundsView,
  ShipmentsView,
  StockSetView,
  StockView,
  VoucherCreated,
} from '@checkout/contracts';
import { ConservationTarget, loadStackConfig } from '@checkout/testing';

/** Dev API keys of the seed tenants (libs/service-kit TenantRegistry, dev seed only). */
export const TENANT_KEYS = { acme: 'acme-dev-key', globex: 'globex-dev-key' } as const;
export type TenantName = keyof typeof TENANT_KEYS;

const stack = loadStackConfig();
const ports = stack.servicePorts;
const url = (service: string) => `http://127.0.0.1:${ports[service]}`;
/** A service's internal port: /metrics and /health/* are served there only. */
const internalUrl = (service: string) => `http://127.0.0.1:${stack.internalPorts[service]}`;

/** Base URLs of the five services of the running stack. */
export const SERVICE_URLS = {
  order: url('order'),
  inventory: url('inventory'),
  payment: url('payment'),
  fulfillment: url('fulfillment'),
  psp: url('psp-simulator'),
} as const;
export type ServiceName = keyof typeof SERVICE_URLS;

/** Where the conservation checker reads the local stack's services, as one tenant. */
export const conservationTarget = (
  tenant: TenantName,
  options: Pick<ConservationTarget, 'concurrency' | 'timeoutMs' | 'unavailableMs'> = {},
): ConservationTarget => ({
  orderUrl: SERVICE_URLS.order,
  inventoryUrl: SERVICE_URLS.inventory,
  paymentUrl: SERVICE_URLS.payment,
  pspUrl: SERVICE_URLS.psp,
  apiKey: TENANT_KEYS[tenant],
  ...options,
});

/** A SKU no other spec uses: the prefix says what the SKU is for, the suffix makes it unique. */
export const uniqueSku = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex').toUpperCase()}`;

/** A customer id no other spec uses (the carrier refuses `undeliverable-*`). */
export const uniqueCustomer = (prefix = 'e2e') => `${prefix}-${randomBytes(5).toString('hex')}`;

/** One HTTP answer: status, headers, and the body as text and parsed JSON (undefined if not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** An answer whose status was not the expected one: carries the whole answer for the assertion message. */
export class UnexpectedAnswer extends Error {
  constructor(
    what: string,
    readonly answer: Answer,
  ) {
    super(`${what} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
}

// Every schema below is the shared contract of libs/contracts/src/http (docs/api.md, docs/openapi/).
export {
  CheckoutAccepted,
  CheckoutRequest,
  ErrorBody,
  LedgerView,
  NotificationsView,
  OrderView,
  PaymentsView,
  RefundView,
  ShipmentsView,
  StockView,
} from '@checkout/contracts';
export type PaymentView = PaymentsView['payments'][number];
export type NotificationView = NotificationsView['notifications'][number];
export type ShipmentView = ShipmentsView['shipments'][number];

/** Sends one request; a connection reset under load is sent again (every call here is idempotent or keyed). */
export async function request(
  method: string,
  target: string,
  { key, body, headers = {} }: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const send = () =>
    fetch(target, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  let res: Response | undefined;
  for (let attempt = 1; !res; attempt += 1) {
    res = await send().catch((error: unknown) => {
      if (attempt < 3) return undefined;
      const cause = (error as { cause?: unknown }).cause;
      throw new Error(`${method} ${target}: ${String(error)}${cause ? ` (${String(cause)})` : ''}`, {
        cause: error,
      });
    });
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Parses an answer's body with its schema, after checking the status. */
export function expectBody<S extends z.ZodType>(what: string, answer: Answer, status: number, schema: S) {
  if (answer.status !== status) throw new UnexpectedAnswer(what, answer);
  const parsed = schema.safeParse(answer.json);
  if (!parsed.success)
    throw new Error(`${what}: body does not match its contract: ${parsed.error.message}\n${answer.text}`);
  return parsed.data as z.infer<S>;
}

/**
 * The public HTTP APIs of the five services as one tenant sees them (docs/api.md). Every answer is validated
 * against its contract (libs/contracts/src/http) before a spec reads it.
 */
export class CheckoutApi {
  readonly key: string;

  constructor(readonly tenant: TenantName = 'acme') {
    this.key = TENANT_KEYS[tenant];
  }

  private call(service: ServiceName, method: string, path: string, body?: unknown, headers = {}) {
    return request(method, `${SERVICE_URLS[service]}${path}`, { key: this.key, body, headers });
  }

  /** `PUT /v1/admin/prices/{sku}`. */
  async setPrice(sku: string, unitPrice: number, currency = 'VND'): Promise<void> {
    const answer = await this.call('order', 'PUT', `/v1/admin/prices/${sku}`, { unitPrice, currency });
    expectBody(
      `PUT price ${sku}`,
      answer,
      200,
      PriceView.extend({ sku: z.literal(sku), unitPrice: z.literal(unitPrice) }),
    );
  }

  /** `PUT /v1/admin/stock/{sku}`: the on-hand available units, the backorder flag, the per-SKU TTL. */
  async setStock(
    sku: string,
    body: { available: number; allowBackorder?: boolean; reservationTtlSeconds?: number | null },
  ): Promise<StockSetView> {
    const answer = await this.call('inventory', 'PUT', `/v1/admin/stock/${sku}`, body);
    return expectBody(`PUT stock ${sku}`, answer, 200, StockSetView);
  }

  /** `GET /v1/stock/{sku}`. */
  async stock(sku: string): Promise<StockView> {
    return expectBody(
      `GET stock ${sku}`,
      await this.call('inventory', 'GET', `/v1/stock/${sku}`),
      200,
      StockView,
    );
  }

  /** `POST /v1/admin/vouchers`. */
  async createVoucher(code: string, percentOff: number, maxRedemptions: number): Promise<void> {
    const answer = await this.call('order', 'POST', '/v1/admin/vouchers', {
      code,
      percentOff,
      maxRedemptions,
    });
    expectBody(`POST voucher ${code}`, answer, 201, VoucherCreated);
  }

  /** `PUT /v1/admin/flash-sales/{sku}`: the Redis gate on (primed with `available`, or from inventory) or off. */
  async setFlashSale(sku: string, enabled: boolean, available?: number) {
    const answer = await this.call('order', 'PUT', `/v1/admin/flash-sales/${sku}`, { enabled, available });
    return expectBody(`PUT flash sale ${sku}`, answer, 200, FlashSaleView);
  }

  /** `POST /v1/checkout` with an Idempotency-Key; the raw answer (202, or a 4xx a spec expects). */
  checkout(body: CheckoutRequest, idempotencyKey: string = randomUUID()): Promise<Answer> {
    return this.call('order', 'POST', '/v1/checkout', body, { 'idempotency-key': idempotencyKey });
  }

  /** A checkout that must be accepted: returns the order id. */
  async placeOrder(body: CheckoutRequest): Promise<string> {
    return expectBody('POST checkout', await this.checkout(body), 202, CheckoutAccepted).orderId;
  }

  /** `GET /v1/orders/{id}`. */
  async order(orderId: string): Promise<OrderView> {
    return expectBody(
      `GET order ${orderId}`,
      await this.call('order', 'GET', `/v1/orders/${orderId}`),
      200,
      OrderView,
    );
  }

  /** `POST /v1/orders/{id}/cancel`: the raw answer (202, or 409 once paid). */
  cancel(orderId: string): Promise<Answer> {
    return this.call('order', 'POST', `/v1/orders/${orderId}/cancel`);
  }

  /** `GET /v1/payments?orderId=`. */
  async payments(orderId: string): Promise<PaymentView[]> {
    const answer = await this.call('payment', 'GET', `/v1/payments?orderId=${orderId}`);
    return expectBody(`GET payments of ${orderId}`, answer, 200, PaymentsView).payments;
  }

  /** `GET /v1/payments/refunds?state=`: the tenant's refunds, e.g. the parked ones. */
  async refunds(state?: RefundView['state']): Promise<RefundView[]> {
    const answer = await this.call('payment', 'GET', `/v1/payments/refunds${state ? `?state=${state}` : ''}`);
    return expectBody('GET refunds', answer, 200, RefundsView).refunds;
  }

  /** `POST /v1/payments/refunds/{id}/retry`: the raw answer (202, or 404 when the refund is not parked). */
  retryRefundAnswer(refundId: string): Promise<Answer> {
    return this.call('payment', 'POST', `/v1/payments/refunds/${refundId}/retry`);
  }

  /** An operator sends a parked refund back to the retry queue. */
  async retryRefund(refundId: string): Promise<RefundView> {
    return expectBody(
      `POST retry refund ${refundId}`,
      await this.retryRefundAnswer(refundId),
      202,
      RefundView,
    );
  }

  /** `GET /v1/shipments?orderId=`. */
  async shipments(orderId: string): Promise<ShipmentView[]> {
    const answer = await this.call('fulfillment', 'GET', `/v1/shipments?orderId=${orderId}`);
    return expectBody(`GET shipments of ${orderId}`, answer, 200, ShipmentsView).shipments;
  }

  /** `GET /v1/notifications?orderId=`. */
  async notifications(orderId: string): Promise<NotificationView[]> {
    const answer = await this.call('fulfillment', 'GET', `/v1/notifications?orderId=${orderId}`);
    return expectBody(`GET notifications of ${orderId}`, answer, 200, NotificationsView).notifications;
  }

  /** The PSP simulator's ledger of one order (charges, refunds, webhook events and deliveries). */
  async ledger(orderId: string): Promise<LedgerView> {
    const answer = await request('GET', `${SERVICE_URLS.psp}/v1/_ledger?reference=${orderId}`);
    return expectBody(`GET ledger of ${orderId}`, answer, 200, LedgerView);
  }

  /**
   * Scripts the PSP simulator to answer `status` to the next `times` charge or refund requests of an order, or of an
   * amount (`{ amount }`: for an order whose id is not known before its saga may reach the PSP).
   */
  async addPspFault(
    target: string | { amount: number },
    operation: 'charge' | 'refund',
    times: number,
    status = 503,
  ): Promise<void> {
    const selector = typeof target === 'string' ? { reference: target } : target;
    const answer = await request('POST', `${SERVICE_URLS.psp}/v1/_admin/faults`, {
      body: { ...selector, operation, status, times },
    });
    expectBody(
      `POST PSP fault for ${JSON.stringify(selector)}`,
      answer,
      201,
      z.object({ operation: z.literal(operation) }),
    );
  }

  /** Removes the PSP simulator's scripted faults of an order (or of an amount). */
  async clearPspFaults(target: string | { amount: number }): Promise<number> {
    const query = typeof target === 'string' ? `reference=${target}` : `amount=${target.amount}`;
    const answer = await request('DELETE', `${SERVICE_URLS.psp}/v1/_admin/faults?${query}`);
    return expectBody(`DELETE PSP faults of ${query}`, answer, 200, z.object({ removed: z.number().int() }))
      .removed;
  }
}

/** One sample of a Prometheus metric from a service's `/metrics` (sum over the label sets that match). */
export async function metricValue(
  service: ServiceName | 'saga-tracker',
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const answer = await request(
    'GET',
    `${internalUrl(service === 'psp' ? 'psp-simulator' : service)}/metrics`,
  );
  if (answer.status !== 200) throw new UnexpectedAnswer(`GET ${service} /metrics`, answer);
  let sum = 0;
  let seen = false;
  for (const line of answer.text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k, v]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      sum += Number(m[3]);
      seen = true;
    }
  }
  if (!seen) throw new Error(`${service} /metrics has no sample of ${name}${JSON.stringify(labels)}`);
  return sum;
}
