import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { request } from 'undici';
import { PinoLogger } from 'nestjs-pino';
import { PspCredentialRegistry, SERVICE_CONFIG } from '@checkout/service-kit';
import { PspSimulatorConfig } from '../config/psp-simulator.config';
import { behaviourOf } from './domain/behaviour';
import { PspJournal } from './psp.journal';
import { signatureHeader } from './domain/signature';
import {
  Charge,
  Delivery,
  ChargeInput,
  Idempotent,
  PspRequestError,
  PspStore,
  Refund,
  WebhookEvent,
} from './psp.store';

/** The chaos knobs, adjustable at runtime through the admin endpoint. */
export interface Knobs {
  latencyMs: number;
  jitterMs: number;
  errorRate: number;
  errorMode: 'before' | 'after';
  /** Share of charges whose answer hangs PSP_SIM_HANG_MS (past the caller's timeout); the charge still happens. */
  hangRate: number;
  /** Share of charges that happen but whose answer is lost: the connection is dropped without a response. */
  lostResponseRate: number;
  /** Each webhook event is delivered this many times (a real PSP's at-least-once delivery). */
  webhookCopies: number;
  /** Each delivery waits a random 0..this ms first, so that deliveries of events arrive shuffled. */
  webhookShuffleMs: number;
  /** Share of deliveries sent with a signature that does not match (a forgery): the receiver must refuse them. */
  badSignatureRate: number;
  /** Share of deliveries signed with a timestamp an hour old (a replay): the receiver must refuse them. */
  staleTimestampRate: number;
}

/** The storm knobs off: what a simulator started without them does. */
export const CALM_STORM_KNOBS = {
  hangRate: 0,
  lostResponseRate: 0,
  webhookCopies: 1,
  webhookShuffleMs: 0,
  badSignatureRate: 0,
  staleTimestampRate: 0,
} as const;

/** How old a replayed (stale) delivery's signature timestamp is. */
const STALE_SIGNATURE_AGE_S = 3_600;

/**
 * A scripted fault for one reference, or for one amount (like the magic amounts of a real PSP's test mode, for a
 * caller that must script the fault before it knows the reference): each of the next `times` requests of that
 * operation waits `delayMs`, then fails with `status`, either `before` it is processed (nothing happens) or `after`
 * (it happens, the answer is lost). `status: null` only delays: a per-request latency that leaves the shared knobs
 * alone.
 */
export type FaultTarget =
  { reference: string; amount?: undefined } | { amount: number; reference?: undefined };

export type Fault = FaultTarget & {
  operation: 'charge' | 'refund';
  status: number | null;
  mode: 'before' | 'after';
  delayMs: number;
  times: number;
};

/** Whether a fault is scripted for a request of that reference and amount. */
const targets = (fault: Fault, reference: string, amount: number): boolean =>
  fault.reference !== undefined ? fault.reference === reference : fault.amount === amount;

/** Raised to answer a request with a 5xx (injected errors), as a real PSP under trouble would. */
export class InjectedFailure extends Error {
  constructor(readonly status: number) {
    super(`injected failure ${status}`);
  }
}

/** Raised when a request was processed but its answer must be lost: the controller drops the connection. */
export class LostResponse extends Error {
  constructor() {
    super('the answer is lost');
  }
}

/** The PSP's behaviour: charges, refunds, webhooks, knobs and faults on top of the in-memory store. */
@Injectable()
export class PspService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly store: PspStore;
  readonly knobs: Knobs;
  private readonly faults: Fault[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PspSimulatorConfig,
    private readonly accounts: PspCredentialRegistry,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('PspService');
    this.store = new PspStore(
      config.PSP_SIM_STATE_FILE ? new PspJournal(config.PSP_SIM_STATE_FILE) : undefined,
    );
    this.knobs = {
      latencyMs: config.PSP_SIM_LATENCY_MS,
      jitterMs: config.PSP_SIM_LATENCY_JITTER_MS,
      errorRate: config.PSP_SIM_ERROR_RATE,
      errorMode: config.PSP_SIM_ERROR_MODE,
      ...CALM_STORM_KNOBS,
    };
  }

  /** The account id a secret key belongs to (compared in constant time), like a real PSP's API keys. */
  accountOf(key: string | undefined): string | undefined {
    if (!key) return undefined;
    return this.accounts.bySecretKey(key)?.accountId;
  }

  /** Creates (or replays) a charge and waits as the token says before answering. */
  async charge(account: string, key: string, input: ChargeInput): Promise<Idempotent<Charge>> {
    const behaviour = behaviourOf(input.token);
    if (!behaviour) throw new PspRequestError('TOKEN_INVALID', `unknown payment token ${input.token}`);
    const answer = await this.process(input.reference, input.amount, 'charge', () =>
      this.store.createCharge(
        account,
        key,
        input,
        behaviour.settle === 'now' ? behaviour.outcome : 'pending',
      ),
    );
    if (behaviour.hang || Math.random() < this.knobs.hangRate) await this.sleep(this.config.PSP_SIM_HANG_MS);
    if (!answer.replayed && Math.random() < this.knobs.lostResponseRate) throw new LostResponse();
    return { object: { ...answer.object }, replayed: answer.replayed };
  }

  /** Refunds a charge (once per key); a new refund's webhook follows as the charge's token says. */
  async refund(
    account: string,
    key: string,
    input: { charge: string; amount?: number; reason?: string | null },
  ): Promise<Idempotent<Refund>> {
    const charge = this.store.charges.get(input.charge);
    return this.process(charge?.reference ?? '', input.amount ?? charge?.amount ?? 0, 'refund', () =>
      this.store.createRefund(account, key, input),
    );
  }

  /** Scripts a fault for one reference or amount. */
  addFault(fault: Fault): void {
    this.faults.push({ ...fault });
  }

  /** Removes the faults of a reference or of an amount. */
  clearFaults(target: FaultTarget): number {
    let removed = 0;
    for (let i = this.faults.length - 1; i >= 0; i--) {
      const fault = this.faults[i];
      if (
        target.reference !== undefined ? fault.reference === target.reference : fault.amount === target.amount
      ) {
        this.faults.splice(i, 1);
        removed += 1;
      }
    }
    return removed;
  }

  /** After a restart with a journal, charges still pending settle as their token says (the timers were lost). */
  onApplicationBootstrap(): void {
    const pending = [...this.store.charges.values()].filter((c) => c.status === 'pending');
    for (const charge of pending) this.afterCharged(charge);
    if (this.store.charges.size > 0)
      this.logger.info(
        { charges: this.store.charges.size, refunds: this.store.refunds.size, pending: pending.length },
        'state restored from the journal',
      );
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  /**
   * One charge or refund request: latency (knobs, then the reference's scripted delay), injected failures before
   * or after the work, and the webhooks of what it created.
   */
  private async process<T extends Charge | Refund>(
    reference: string,
    amount: number,
    operation: Fault['operation'],
    work: () => Idempotent<T>,
  ): Promise<Idempotent<T>> {
    const { latencyMs, jitterMs } = this.knobs;
    const at = this.faults.findIndex((f) => f.operation === operation && targets(f, reference, amount));
    const fault = at >= 0 ? this.faults[at] : undefined;
    // A used-up fault is forgotten: benchmarks script one per request and the list must not grow.
    if (fault && --fault.times === 0) this.faults.splice(at, 1);
    const delay = latencyMs + (jitterMs > 0 ? Math.random() * jitterMs : 0) + (fault?.delayMs ?? 0);
    if (delay > 0) await this.sleep(delay);
    const failure = (mode: Fault['mode']): number | null => {
      if (fault?.status != null && fault.mode === mode) return fault.status;
      return this.knobs.errorMode === mode && Math.random() < this.knobs.errorRate ? 500 : null;
    };
    const before = failure('before');
    if (before !== null) throw new InjectedFailure(before);
    const answer = work();
    if (!answer.replayed) {
      if (answer.object.object === 'charge') this.afterCharged(answer.object);
      else this.afterRefunded(answer.object);
    }
    const after = failure('after');
    if (after !== null) throw new InjectedFailure(after);
    return answer;
  }

  /** A refund's outcome webhook, delivered like the charge's: none for tok_webhook_lost, thrice for duplicates. */
  private afterRefunded(refund: Refund): void {
    const charge = this.store.charges.get(refund.charge)!;
    const { webhook } = behaviourOf(charge.token)!;
    if (webhook === 'none') return;
    this.later(this.config.PSP_SIM_WEBHOOK_DELAY_MS, async () => {
      const event = this.store.newEvent('refund.succeeded', refund);
      await this.deliverCopies(event, webhook === 'three-times' ? 3 : 1);
    });
  }

  /** Schedules settlement and webhooks of a new charge as its token says. */
  private afterCharged(charge: Charge): void {
    const behaviour = behaviourOf(charge.token)!;
    const c = this.config;
    const type = (ch: Charge) => (ch.status === 'succeeded' ? 'charge.succeeded' : 'charge.failed');
    switch (behaviour.webhook) {
      case 'once':
        if (behaviour.settle === 'now') {
          this.later(c.PSP_SIM_WEBHOOK_DELAY_MS, () =>
            this.deliverCopies(this.store.newEvent(type(charge), charge)),
          );
        } else {
          const delay = behaviour.settle === '3ds' ? c.PSP_SIM_3DS_DELAY_MS : c.PSP_SIM_LATE_WEBHOOK_DELAY_MS;
          this.later(delay, () => {
            const settled = this.store.settle(charge.id, behaviour.outcome);
            return this.deliverCopies(this.store.newEvent(type(settled), settled));
          });
        }
        break;
      case 'after-hang':
        this.later(c.PSP_SIM_TIMEOUT_WEBHOOK_DELAY_MS, () =>
          this.deliverCopies(this.store.newEvent(type(charge), charge)),
        );
        break;
      case 'three-times':
        this.later(c.PSP_SIM_WEBHOOK_DELAY_MS, async () => {
          const event = this.store.newEvent(type(charge), charge);
          await this.deliverCopies(event, 3);
        });
        break;
      case 'none':
        this.later(
          c.PSP_SIM_LOST_SETTLE_MS,
          async () => void this.store.settle(charge.id, behaviour.outcome),
        );
        break;
      case 'success-then-stale-failure':
        this.later(c.PSP_SIM_WEBHOOK_DELAY_MS, async () => {
          await this.deliverCopies(this.store.newEvent('charge.succeeded', charge));
          // A failure from an earlier processing step, delivered late: older `created`, failed snapshot.
          const stale = { ...charge, status: 'failed' as const, failureCode: 'processing_error' };
          await this.deliverCopies(this.store.newEvent('charge.failed', stale, charge.created - 1));
        });
        break;
    }
  }

  /**
   * Delivers an event `copies` times in a row (more under the webhookCopies knob). Under the storm knobs each
   * copy may first wait a random while (shuffled against other events) and may go out forged (a signature that
   * does not match) or replayed (an hour-old timestamp) instead of signed: sent once, recorded as such.
   */
  private async deliverCopies(event: WebhookEvent, copies = 1): Promise<void> {
    const { webhookCopies, webhookShuffleMs, badSignatureRate, staleTimestampRate } = this.knobs;
    const all = Array.from({ length: Math.max(copies, webhookCopies) }, async () => {
      if (webhookShuffleMs > 0) await this.sleep(Math.random() * webhookShuffleMs);
      const roll = Math.random();
      if (roll < badSignatureRate) return this.deliverForged(event, 'bad-signature');
      if (roll < badSignatureRate + staleTimestampRate) return this.deliverForged(event, 'stale-timestamp');
      return this.deliver(event);
    });
    // Without shuffling, copies go one after another as before; with it, they race each other.
    if (webhookShuffleMs > 0) await Promise.all(all);
    else for (const copy of all) await copy;
  }

  /** Posts one forged or replayed copy of an event, once (no retry), and records how the receiver answered. */
  private async deliverForged(
    event: WebhookEvent,
    forged: 'bad-signature' | 'stale-timestamp',
  ): Promise<void> {
    const account = this.accounts.forAccount(event.account);
    if (!account) return;
    const body = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const signature =
      forged === 'stale-timestamp'
        ? signatureHeader(account.webhookSecret, body, now - STALE_SIGNATURE_AGE_S)
        : signatureHeader(`${account.webhookSecret}-forged`, body, now);
    this.recordDelivery(event, await this.post(body, signature), forged);
  }

  /** Records how the receiver answered one delivery of an event. */
  private recordDelivery(
    event: WebhookEvent,
    answer: Pick<Delivery, 'status' | 'error'>,
    forged?: Delivery['forged'],
  ): void {
    this.store.recordDelivery({
      eventId: event.id,
      type: event.type,
      reference: event.data.object.reference,
      ...answer,
      at: new Date().toISOString(),
      ...(forged ? { forged } : {}),
    });
  }

  /** Posts one event, signed with the tenant's secret, retrying with backoff until 2xx or out of attempts. */
  async deliver(event: WebhookEvent): Promise<number | null> {
    const account = this.accounts.forAccount(event.account);
    if (!account) return null;
    const body = JSON.stringify(event);
    let status: number | null = null;
    for (let attempt = 1; attempt <= this.config.PSP_SIM_WEBHOOK_ATTEMPTS && !this.stopped; attempt++) {
      const answer = await this.post(body, signatureHeader(account.webhookSecret, body));
      const { error } = answer;
      status = answer.status;
      this.recordDelivery(event, answer);
      if (status !== null && status >= 200 && status < 300) return status;
      this.logger.warn({ eventId: event.id, status, error, attempt }, 'webhook delivery failed');
      await this.sleep(Math.min(250 * 2 ** attempt, 10_000));
    }
    return status;
  }

  /** One POST of a webhook body to payment: its status, or why there was none. */
  private async post(
    body: string,
    signature: string,
  ): Promise<{ status: number | null; error: string | null }> {
    try {
      // undici's request rather than fetch: the same client without the WHATWG objects around each call.
      const res = await request(`${this.config.PAYMENT_URL}/v1/psp/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'psp-signature': signature },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await res.body.dump();
      return { status: res.statusCode, error: null };
    } catch (e) {
      return { status: null, error: (e as Error).message };
    }
  }

  private later(ms: number, fn: () => Promise<unknown>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn().catch((error: unknown) => this.logger.error({ err: String(error) }, 'scheduled PSP work failed'));
    }, ms);
    this.timers.add(timer);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}
