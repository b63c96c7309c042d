import { z } from 'zod';
import {
  CheckoutAccepted,
  ErrorBody,
  FlashSaleView,
  OrderView,
  PriceView,
  StockSetView,
  StockView,
} from '@checkout/contracts';
import { ConservationTarget, loadStackConfig } from '@checkout/testing';

/** Dev key of the seed tenant the demo buys as. */
export const DEMO_API_KEY = 'acme-dev-key';

/** An HTTP answer: status, validated body, and when it arrived (ms since epoch). */
export interface Answer<T> {
  status: number;
  body: T;
  at: number;
}

/** What one checkout answered: accepted with an order id, or refused with the error code. */
export type CheckoutOutcome =
  | { kind: 'accepted'; orderId: string; at: number; sentAt: number }
  | { kind: 'refused'; status: number; error: string; at: number };

/** A checkout request of one shopper. */
export interface CheckoutRequest {
  idempotencyKey: string;
  customerId: string;
  sku: string;
  unitPrice: number;
  token: string;
}

/** How long a service may stay unreachable (restarted by someone, a socket reset) before a call fails. */
const UNREACHABLE_MS = 30_000;

/** Thrown when a service answers something the contract does not allow. */
export class OffContract extends Error {}

/**
 * The demo's client of the public HTTP APIs (order, inventory, PSP ledger), one tenant key, every body validated.
 * A request that did not get through (a keep-alive socket closed under load, a service being restarted) is
 * sent again for a while: checkouts carry their Idempotency-Key, which is exactly the retry it exists for, and
 * every other call is idempotent.
 */
export class DemoApi {
  readonly orderUrl: string;
  readonly inventoryUrl: string;
  readonly paymentUrl: string;
  readonly pspUrl: string;

  constructor(readonly apiKey = DEMO_API_KEY) {
    const ports = loadStackConfig().servicePorts;
    const url = (service: string) => `http://127.0.0.1:${ports[service]}`;
    this.orderUrl = url('order');
    this.inventoryUrl = url('inventory');
    this.paymentUrl = url('payment');
    this.pspUrl = url('psp-simulator');
  }

  /** Where the conservation checker reads. */
  get target(): ConservationTarget {
    return {
      orderUrl: this.orderUrl,
      inventoryUrl: this.inventoryUrl,
      paymentUrl: this.paymentUrl,
      pspUrl: this.pspUrl,
      apiKey: this.apiKey,
    };
  }

  /** Prices a SKU (order admin API). */
  async putPrice(sku: string, unitPrice: number, currency = 'VND'): Promise<void> {
    await this.expect(200, PriceView, 'PUT', `${this.orderUrl}/v1/admin/prices/${sku}`, {
      unitPrice,
      currency,
    });
  }

  /** Sets the available units of a SKU (inventory admin API); answers the stock it now has. */
  async putStock(sku: string, available: number): Promise<StockSetView> {
    return this.expect(200, StockSetView, 'PUT', `${this.inventoryUrl}/v1/admin/stock/${sku}`, {
      available,
      allowBackorder: false,
    });
  }

  /** Turns the flash-sale gate of a SKU on (primed from inventory) or off. */
  async putFlashSale(sku: string, enabled: boolean): Promise<FlashSaleView> {
    return this.expect(200, FlashSaleView, 'PUT', `${this.orderUrl}/v1/admin/flash-sales/${sku}`, {
      enabled,
    });
  }

  /** One shopper's `POST /v1/checkout`: accepted (202) or refused (4xx with its error code). */
  async checkout(req: CheckoutRequest): Promise<CheckoutOutcome> {
    const body = {
      customerId: req.customerId,
      currency: 'VND',
      lines: [{ sku: req.sku, quantity: 1, unitPrice: req.unitPrice }],
      payment: { token: req.token },
    };
    let res = await this.send('POST', `${this.orderUrl}/v1/checkout`, body, {
      'idempotency-key': req.idempotencyKey,
    });
    const firstSentAt = res.sentAt;
    // A resent request can find its first attempt still in flight: ask again until that one has answered.
    for (let wait = 100; res.status === 409 && res.text.includes('IDEMPOTENCY_KEY_IN_USE'); wait *= 2) {
      if (wait > 6_400) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
      res = await this.send('POST', `${this.orderUrl}/v1/checkout`, body, {
        'idempotency-key': req.idempotencyKey,
      });
    }
    if (res.status === 202) {
      const ok = this.parse(CheckoutAccepted, res, 'POST /v1/checkout');
      return { kind: 'accepted', orderId: ok.orderId, at: res.at, sentAt: firstSentAt };
    }
    if (res.status >= 400 && res.status < 500) {
      const err = this.parse(ErrorBody, res, 'POST /v1/checkout');
      return { kind: 'refused', status: res.status, error: err.error, at: res.at };
    }
    throw new OffContract(`POST /v1/checkout answered ${res.status}: ${res.text.slice(0, 200)}`);
  }

  /** The order as the order read API shows it. */
  async order(orderId: string): Promise<OrderView> {
    return this.expect(200, OrderView, 'GET', `${this.orderUrl}/v1/orders/${orderId}`);
  }

  /** Stock of a SKU as the inventory read API shows it. */
  async stock(sku: string): Promise<StockView> {
    return this.expect(200, StockView, 'GET', `${this.inventoryUrl}/v1/stock/${sku}`);
  }

  private async expect<T>(
    status: number,
    schema: z.ZodType<T>,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<T> {
    const res = await this.send(method, url, body);
    if (res.status !== status)
      throw new OffContract(`${method} ${url} answered ${res.status}: ${res.text.slice(0, 200)}`);
    return this.parse(schema, res, `${method} ${url}`);
  }

  private parse<T>(schema: z.ZodType<T>, res: { text: string }, what: string): T {
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw new OffContract(`${what}: not JSON: ${res.text.slice(0, 200)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new OffContract(`${what}: off contract: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }

  private async send(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; text: string; at: number; sentAt: number }> {
    const giveUpAt = Date.now() + UNREACHABLE_MS;
    // When the first attempt went out: the server cannot have acted on the request before (its answer can arrive
    // after the saga it started has moved on, on a busy client).
    const sentAt = Date.now();
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 2_000)) {
      try {
        const res = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        return { status: res.status, text, at: Date.now(), sentAt };
      } catch (error) {
        if ((error as Error).name === 'TimeoutError' || Date.now() + backoff > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
    }
  }
}
