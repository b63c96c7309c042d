import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadStackConfig, waitFor } from '@checkout/testing';
import { SagaApiClient, SagaViewBody, TrackerError } from '../src/cli/saga-api.client';

const ports = loadStackConfig().servicePorts;
const url = (name: string) => `http://127.0.0.1:${ports[name]}`;

/** Base URLs of the running services. */
export const TRACKER_URL = url('saga-tracker');
export const ORDER_URL = url('order');
export const INVENTORY_URL = url('inventory');
export const PSP_URL = url('psp-simulator');

/** Dev API keys of the seeded tenants. */
export const ACME_KEY = 'acme-dev-key';
export const GLOBEX_KEY = 'globex-dev-key';

export { TEST_TIMEOUTS } from './timeouts';

/** The events of a saga that ends SHIPPED, in the order they happen. */
export const SHIPPED_PATH = [
  'order.created',
  'inventory.reserved',
  'payment.succeeded',
  'inventory.committed',
  'order.paid',
  'fulfillment.shipment-created',
] as const;

/** How long one saga path may take on a busy, shared 2-core machine. */
export const SAGA_TIMEOUT_MS = 90_000;

/** The tracker's API as acme sees it. */
export const tracker = new SagaApiClient(TRACKER_URL, ACME_KEY, 10_000);

/** A value no other spec or run uses. */
export const unique = (name: string): string => `${name}-${randomBytes(4).toString('hex').toUpperCase()}`;

async function call(base: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${ACME_KEY}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

/** A W3C traceparent with a fresh trace id: what an instrumented storefront would send. */
export function newTraceparent(): { traceId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

/**
 * A real checkout through the order API of acme, for a fresh SKU with a price and stock: returns the order id
 * once the order service accepted it (202).
 */
export async function checkout(token: string, headers: Record<string, string> = {}): Promise<string> {
  const sku = unique('SAGA-TRK');
  const price = await call(ORDER_URL, 'PUT', `/v1/admin/prices/${sku}`, {
    unitPrice: 25_000,
    currency: 'VND',
  });
  assert.equal(price.status, 200, JSON.stringify(price.body));
  const stock = await call(INVENTORY_URL, 'PUT', `/v1/admin/stock/${sku}`, {
    available: 5,
    allowBackorder: false,
  });
  assert.equal(stock.status, 200, JSON.stringify(stock.body));
  const res = await call(
    ORDER_URL,
    'POST',
    '/v1/checkout',
    {
      customerId: unique('saga-trk-customer'),
      currency: 'VND',
      lines: [{ sku, quantity: 1 }],
      payment: { token },
    },
    { 'idempotency-key': randomUUID(), ...headers },
  );
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return String(res.body.orderId);
}

/** Waits until the tracker's view of a saga satisfies the predicate; returns that view. */
export async function waitForSaga(
  orderId: string,
  what: string,
  predicate: (saga: SagaViewBody) => boolean,
  timeoutMs = SAGA_TIMEOUT_MS,
): Promise<SagaViewBody> {
  let last: SagaViewBody | undefined;
  try {
    return await waitFor(
      `saga ${orderId} ${what}`,
      async () => {
        const saga = await tracker.saga(orderId).catch((error: unknown) => {
          if (error instanceof TrackerError) return undefined;
          throw error;
        });
        if (saga) last = saga;
        return saga && predicate(saga) ? saga : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  } catch (error) {
    const seen =
      (last as SagaViewBody | undefined)?.timeline.map((s) => s.type).join(' > ') ?? 'not recorded';
    throw new Error(`${(error as Error).message}; last seen: ${seen}`);
  }
}

/** The value of one Prometheus sample of the tracker's /metrics, or undefined. */
export async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const internal = `http://127.0.0.1:${loadStackConfig().internalPorts['saga-tracker']}`;
  const text = await (await fetch(`${internal}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...m[2].matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** Scripts (or clears) a PSP fault for one order: only that order's charges fail, the shared PSP runs on. */
export async function pspFault(orderId: string, on: boolean): Promise<void> {
  const res = on
    ? await call(PSP_URL, 'POST', '/v1/_admin/faults', {
        reference: orderId,
        operation: 'charge',
        status: 503,
        times: 1000,
      })
    : await call(PSP_URL, 'DELETE', `/v1/_admin/faults?reference=${orderId}`);
  assert.ok(res.status === 201 || res.status === 200, `PSP fault ${on ? 'set' : 'cleared'}: ${res.status}`);
}

/** The PSP's charges for an order (its test ledger). */
export async function pspCharges(orderId: string): Promise<{ status: string }[]> {
  const res = await call(PSP_URL, 'GET', `/v1/_ledger?reference=${orderId}`);
  assert.equal(res.status, 200);
  return res.body.charges as { status: string }[];
}
