import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadStackConfig, serviceDatabase } from '@checkout/testing';

const stack = loadStackConfig();
const ports = stack.servicePorts;
/** Base URL of the running order service. */
export const ORDER = `http://127.0.0.1:${ports.order}`;
/** The order service's internal port: /metrics and /health/*. */
export const ORDER_INTERNAL = `http://127.0.0.1:${stack.internalPorts.order}`;
const INVENTORY = `http://127.0.0.1:${ports.inventory}`;

/** A service's database for the specs of one `describe`: connected before its first test, closed after its last. */
export function suiteDataSource(database: string, poolSize: number): DataSource {
  const ds = serviceDatabase(database, poolSize);
  beforeAll(() => ds.initialize());
  afterAll(() => ds.destroy());
  return ds;
}

/** Dev API keys of the seed tenants. */
export const ACME = 'acme-dev-key';
export const GLOBEX = 'globex-dev-key';

/** A SKU no other test uses. */
export const uniqueSku = (name = 'SKU') => `${name}-${randomBytes(5).toString('hex')}`;

/** One HTTP answer with its raw text. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

/** Sends a request to the order service; body is JSON unless it is a string (sent as is). */
export async function call(
  method: string,
  path: string,
  {
    key = ACME,
    body,
    headers = {},
    base = ORDER,
  }: { key?: string | null; body?: unknown; headers?: Record<string, string>; base?: string } = {},
): Promise<Answer> {
  const send = () =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  // A keep-alive socket closed by the server under load resets the request: resend it, with the same
  // Idempotency-Key, which is exactly the retry the key exists for.
  let res: Response | undefined;
  for (let attempt = 1; !res; attempt += 1) {
    res = await send().catch((error: unknown) => {
      if (attempt >= 4) throw error;
      return undefined;
    });
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A checkout body for one line of a SKU. */
export const checkoutBody = (sku: string, extra: Record<string, unknown> = {}, quantity = 1) => ({
  customerId: `c-${randomUUID()}`,
  currency: 'VND',
  lines: [{ sku, quantity, unitPrice: 50_000 }],
  payment: { token: 'tok_success' },
  ...extra,
});

/** POST /v1/checkout with an Idempotency-Key. */
export const checkout = (
  body: unknown,
  idempotencyKey: string | null = randomUUID(),
  key: string | null = ACME,
) =>
  call('POST', '/v1/checkout', {
    key,
    body,
    headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey },
  });

/** A checkout answer that the contract says to retry with the same Idempotency-Key. */
export const isRetryable = (a: Answer) =>
  (a.status === 503 && a.json.retryable === true) ||
  (a.status === 409 && a.json.error === 'IDEMPOTENCY_KEY_IN_USE');

/**
 * A storefront that follows the contract: a retryable answer (503 GATE_TIMEOUT or SERVICE_UNAVAILABLE, 409
 * IDEMPOTENCY_KEY_IN_USE after a resend whose first try is still running) is retried with the same
 * Idempotency-Key after the Retry-After it was given (else a short pause), at most `maxRetries` times.
 * Returns the final answer and the retryable answers met on the way (error code and Retry-After).
 */
export async function checkoutAsClient(
  body: unknown,
  idempotencyKey: string = randomUUID(),
  maxRetries = 5,
): Promise<{ answer: Answer; retried: { error: string; retryAfter: string | null }[] }> {
  const retried: { error: string; retryAfter: string | null }[] = [];
  for (;;) {
    const answer = await checkout(body, idempotencyKey);
    if (!isRetryable(answer) || retried.length >= maxRetries) return { answer, retried };
    const retryAfter = answer.headers.get('retry-after');
    retried.push({ error: String(answer.json.error), retryAfter });
    const after = Number(retryAfter);
    await new Promise((r) => setTimeout(r, Number.isFinite(after) && after > 0 ? after * 1_000 : 100));
  }
}

/** Prices a SKU at 50,000 VND (or the given price). */
export async function priceSku(sku: string, unitPrice = 50_000, key = ACME, currency = 'VND'): Promise<void> {
  const r = await call('PUT', `/v1/admin/prices/${sku}`, { key, body: { unitPrice, currency } });
  if (r.status !== 200) throw new Error(`PUT price ${sku}: ${r.status} ${r.text}`);
}

/**
 * Gives the SKU stock in inventory when that service is there, so the saga reserves instead of rejecting
 * (a rejection would hand vouchers and gate units back while a test still counts). True when it worked.
 */
export async function stockSku(sku: string, available: number, key = ACME): Promise<boolean> {
  const r = await call('PUT', `/v1/admin/stock/${sku}`, {
    key,
    body: { available, allowBackorder: false },
    base: INVENTORY,
  }).catch(() => undefined);
  return r?.status === 200;
}

/** Runs fn over items with at most `limit` in flight. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}
