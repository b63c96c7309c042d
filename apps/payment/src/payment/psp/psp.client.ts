import { Inject, Injectable } from '@nestjs/common';
import {
  BrokenCircuitError,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
} from 'cockatiel';
import { request } from 'undici';
import { z } from 'zod';
import { PspCredentialRegistry, SERVICE_CONFIG } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import { PaymentMetrics } from '../payment.metrics';

/** A charge as the PSP reports it (the fields we read); every answer is checked before it is believed. */
const PspChargeSchema = z.object({
  id: z.string().min(1).max(128),
  amount: z.number().int().min(0),
  currency: z.string().regex(/^[A-Z]{3}$/),
  reference: z.string().min(1).max(128),
  metadata: z.record(z.string(), z.string()).default({}),
  status: z.enum(['pending', 'succeeded', 'failed']),
  failureCode: z.string().max(128).nullable().default(null),
  refunded: z.boolean(),
  amountRefunded: z.number().int().min(0),
  createdAt: z.iso.datetime({ offset: true }),
});
export type PspCharge = z.infer<typeof PspChargeSchema>;

/** A refund as the PSP reports it. */
const PspRefundSchema = z.object({
  id: z.string().min(1).max(128),
  charge: z.string().min(1).max(128),
  amount: z.number().int().min(1),
});
export type PspRefund = z.infer<typeof PspRefundSchema>;

const PspChargeListSchema = z.object({ data: z.array(PspChargeSchema) });
const PspErrorSchema = z.object({ error: z.string().max(128).optional(), message: z.string().optional() });

/**
 * What one PSP call came to: an answer, a definitive refusal (4xx: nothing happened and retrying will not help),
 * or no answer at all (timeout, 5xx, dropped connection, open breaker): then the outcome is unknown.
 */
export type PspResult<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'rejected'; status: number; code: string; message: string }
  | { kind: 'unavailable'; reason: string };

/** No answer from the PSP: worth retrying with the same idempotency key. */
class PspTransientError extends Error {}

/**
 * Calls the PSP with a short timeout, retries with the same key, and a circuit breaker per PSP account. Calls
 * name the public account id; its secret key is looked up here and goes only into the Authorization header.
 */
@Injectable()
export class PspClient {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly metrics: PaymentMetrics,
    private readonly accounts: PspCredentialRegistry,
  ) {}

  /** Creates (or replays, same key) a charge. */
  charge(
    account: string,
    key: string,
    body: {
      amount: number;
      currency: string;
      token: string;
      reference: string;
      metadata: Record<string, string>;
    },
  ): Promise<PspResult<PspCharge>> {
    return this.call('charge', account, 'POST', '/v1/charges', PspChargeSchema, body, key);
  }

  /** Refunds a charge (once per key). */
  refund(
    account: string,
    key: string,
    body: { charge: string; amount: number; reason: string },
  ): Promise<PspResult<PspRefund>> {
    return this.call('refund', account, 'POST', '/v1/refunds', PspRefundSchema, body, key);
  }

  /** The account's charges with our reference (reconciliation). */
  async chargesByReference(account: string, reference: string): Promise<PspResult<PspCharge[]>> {
    const r = await this.call(
      'lookup',
      account,
      'GET',
      `/v1/charges?reference=${encodeURIComponent(reference)}`,
      PspChargeListSchema,
    );
    return r.kind === 'ok' ? { kind: 'ok', value: r.value.data } : r;
  }

  /** The account's charges created in [from, to) (orphan sweep). */
  async chargesBetween(account: string, from: Date, to: Date): Promise<PspResult<PspCharge[]>> {
    const page = 1000;
    const seen = new Map<string, PspCharge>();
    // Pages oldest first: the next page starts at the last charge's time (ids dedupe the boundary).
    for (let cursor = from; ;) {
      const q = `from=${encodeURIComponent(cursor.toISOString())}&to=${encodeURIComponent(to.toISOString())}&limit=${page}`;
      const r = await this.call('list', account, 'GET', `/v1/charges?${q}`, PspChargeListSchema);
      if (r.kind !== 'ok') return r;
      for (const c of r.value.data) seen.set(c.id, c);
      const last = r.value.data.at(-1);
      if (r.value.data.length < page || !last) break;
      const next = new Date(last.createdAt);
      if (next.getTime() <= cursor.getTime()) break; // a whole page in one millisecond: stop rather than loop
      cursor = next;
    }
    return { kind: 'ok', value: [...seen.values()] };
  }

  private breaker(account: string): CircuitBreakerPolicy {
    let breaker = this.breakers.get(account);
    if (!breaker) {
      breaker = circuitBreaker(
        handleWhen((e) => e instanceof PspTransientError),
        {
          halfOpenAfter: this.config.PAYMENT_BREAKER_HALF_OPEN_MS,
          breaker: new ConsecutiveBreaker(this.config.PAYMENT_BREAKER_THRESHOLD),
        },
      );
      breaker.onStateChange((state) =>
        this.metrics.breakerOpen.set({ account }, state === CircuitState.Open ? 1 : 0),
      );
      this.breakers.set(account, breaker);
    }
    return breaker;
  }

  private async call<T>(
    operation: string,
    account: string,
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<PspResult<T>> {
    const policy = wrap(
      retry(
        handleWhen((e) => e instanceof PspTransientError),
        {
          maxAttempts: this.config.PAYMENT_PSP_RETRIES,
          backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 1_000 }),
        },
      ),
      // Per account, with refunds on their own breaker: a refund outage must not stop charges.
      this.breaker(operation === 'refund' ? `${account}/refunds` : account),
    );
    const end = this.metrics.pspDuration.startTimer({ operation });
    let result: PspResult<T>;
    try {
      result = await policy.execute(() => this.once(account, method, path, schema, body, idempotencyKey));
    } catch (error) {
      if (!(error instanceof PspTransientError || error instanceof BrokenCircuitError)) throw error;
      result = {
        kind: 'unavailable',
        reason: error instanceof BrokenCircuitError ? 'circuit open' : error.message,
      };
    } finally {
      end();
    }
    this.metrics.pspRequests.inc({ operation, outcome: result.kind });
    return result;
  }

  private async once<T>(
    account: string,
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    body: unknown,
    idempotencyKey: string | undefined,
  ): Promise<PspResult<T>> {
    const secretKey = this.accounts.forAccount(account)?.secretKey;
    // No credentials (an account removed from TENANT_PSP_CREDENTIALS): nothing was sent, nothing is believed.
    if (!secretKey) throw new PspTransientError(`no credentials for PSP account ${account}`);
    let status: number;
    let text: string;
    try {
      // undici's request, not fetch: the same HTTP client without fetch's WHATWG Request, Headers and streams,
      // which were a sixth of the payment service's CPU per saga. The deadline covers the answer's body as well.
      const res = await request(`${this.config.PSP_URL}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${secretKey}`,
          'content-type': 'application/json',
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.PAYMENT_PSP_TIMEOUT_MS),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (error) {
      // A timeout or a dropped connection: the request may or may not have reached the PSP.
      throw new PspTransientError(`${(error as Error).name}: ${(error as Error).message}`);
    }
    // 409: the same key is still being processed; 429: slow down. Both: ask again with the same key.
    if (status >= 500 || status === 409 || status === 429)
      throw new PspTransientError(`PSP answered ${status}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PspTransientError(`PSP answered ${status} with a body that is not JSON`);
    }
    if (status >= 400) {
      const e = PspErrorSchema.safeParse(json).data ?? {};
      return {
        kind: 'rejected',
        status,
        code: e.error ?? `HTTP_${status}`,
        message: e.message ?? '',
      };
    }
    const answer = schema.safeParse(json);
    // An answer we cannot read tells us nothing about the money: as good as no answer (same key next time).
    if (!answer.success) throw new PspTransientError(`PSP answered ${status} with an unexpected body`);
    return { kind: 'ok', value: answer.data };
  }
}
