import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { CheckoutRequest, SagaEvents, SagaScenario } from '@checkout/e2e';

/** Payment tokens of a run and their weights (PRODUCT.md section 6): every PSP path, success the most common. */
export const TOKEN_MIX: readonly { token: string; weight: number }[] = [
  { token: 'tok_success', weight: 50 },
  { token: 'tok_decline', weight: 10 },
  { token: 'tok_timeout_success', weight: 8 },
  { token: 'tok_timeout_decline', weight: 4 },
  { token: 'tok_3ds', weight: 6 },
  { token: 'tok_webhook_duplicate', weight: 8 },
  { token: 'tok_webhook_lost', weight: 6 },
  { token: 'tok_out_of_order', weight: 8 },
];

/** How a workload runs: how many checkouts, how fast, how long one checkout may keep being retried. */
export interface WorkloadOptions {
  orders: number;
  /** Checkouts started per second. */
  rate: number;
  /** A flash-sale SKU behind the Redis gate, oversubscribed (the Redis restart case). */
  flashSale?: boolean;
  /** How long one checkout is retried (same Idempotency-Key) while the order service or its database is away. */
  placeDeadlineMs?: number;
}

/** What the checkouts of a run got back. */
export interface PlacementTally {
  attempted: number;
  accepted: number;
  /** 409 OUT_OF_STOCK from the flash-sale gate: no order was created. */
  outOfStock: number;
  /** Retries of a checkout (network error, 503, 409 IDEMPOTENCY_KEY_IN_USE) with the same key. */
  retries: number;
  /** A 5xx other than a retryable 503: a bug (an infrastructure error must answer 503). */
  unexpected5xx: string[];
  /** A checkout that never got an answer within its deadline, or another 4xx: a bug under faults. */
  failed: string[];
}

/** `n` picks from weighted items, in a pseudo-random order fixed by `seed` (the same mix for every run of a size). */
function weightedPicks<T>(
  items: readonly { weight: number }[],
  n: number,
  seed: number,
  value: (i: number) => T,
): T[] {
  const total = items.reduce((s, i) => s + i.weight, 0);
  const out: T[] = [];
  let state = seed;
  for (let k = 0; k < n; k += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    let r = (state / 0x1_0000_0000) * total;
    let i = 0;
    while (i < items.length - 1 && r >= items[i].weight) r -= items[i++].weight;
    out.push(value(i));
  }
  return out;
}

/**
 * A few hundred checkouts of one tenant through the public HTTP API at a steady rate, with a mix of payment
 * tokens and SKUs: a roomy one, a scarce one (some orders REJECTED), one the carrier refuses (shipment failed ->
 * refund) and, for the Redis case, a flash-sale SKU behind the gate. The SKUs are the run's alone, so the
 * conservation checker also matches sold units to orders.
 */
export class Workload {
  readonly scenario: SagaScenario;
  readonly tally: PlacementTally = {
    attempted: 0,
    accepted: 0,
    outOfStock: 0,
    retries: 0,
    unexpected5xx: [],
    failed: [],
  };
  private skus: string[] = [];
  /** The flash-sale SKU behind the Redis gate, when the workload has one. */
  flashSku?: string;

  constructor(
    events: SagaEvents,
    readonly options: WorkloadOptions,
  ) {
    this.scenario = new SagaScenario(events);
  }

  /** The orders accepted so far. */
  get orders(): string[] {
    return this.scenario.orders;
  }

  /** Creates the run's SKUs (and turns the flash-sale gate on for its hot SKU). */
  async prepare(): Promise<void> {
    const n = this.options.orders;
    const s = this.scenario;
    this.skus = [
      await s.sku('CHAOS-ROOMY', n),
      await s.sku('CHAOS-SCARCE', Math.max(1, Math.floor(n / 10))),
      await s.sku('UNSHIPPABLE-CHAOS', n),
    ];
    if (this.options.flashSale) {
      const hot = await s.sku('CHAOS-FLASH', Math.max(1, Math.floor(n / 5)));
      await s.api.setFlashSale(hot, true);
      this.skus.push(hot);
      this.flashSku = hot;
    }
  }

  /** The checkout bodies of the run: SKU and token for each, from fixed weights. */
  private bodies(): CheckoutRequest[] {
    const [roomy, scarce, unshippable, hot] = this.skus;
    const skuMix = [
      { sku: roomy, weight: hot ? 35 : 75 },
      { sku: scarce, weight: 15 },
      { sku: unshippable, weight: 10 },
      ...(hot ? [{ sku: hot, weight: 40 }] : []),
    ];
    const skus = weightedPicks(skuMix, this.options.orders, 0x2f6b_1a3d, (i) => skuMix[i].sku);
    const tokens = weightedPicks(TOKEN_MIX, this.options.orders, 0x5bd1_e995, (i) => TOKEN_MIX[i].token);
    return skus.map((sku, i) => this.scenario.body(sku, tokens[i]));
  }

  /**
   * Starts the checkouts at the configured rate (each retried with its key until it is answered) and resolves
   * when every one is answered or given up.
   */
  async run(): Promise<void> {
    const bodies = this.bodies();
    const gapMs = 1000 / this.options.rate;
    const started = Date.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < bodies.length; i += 1) {
      const due = started + i * gapMs;
      if (due > Date.now()) await delay(due - Date.now());
      inFlight.push(this.place(bodies[i]));
    }
    await Promise.all(inFlight);
  }

  /** One checkout, retried with the same Idempotency-Key through outages until it is answered. */
  private async place(body: CheckoutRequest): Promise<void> {
    this.tally.attempted += 1;
    const key = randomUUID();
    const giveUpAt = Date.now() + (this.options.placeDeadlineMs ?? 180_000);
    let last = '';
    for (let backoff = 200; Date.now() < giveUpAt; backoff = Math.min(backoff * 2, 3_000)) {
      try {
        const answer = await this.scenario.api.checkout(body, key);
        const code = (answer.json as { error?: string } | undefined)?.error;
        if (answer.status === 202) {
          this.scenario.orders.push((answer.json as { orderId: string }).orderId);
          this.tally.accepted += 1;
          return;
        }
        if (answer.status === 409 && code === 'OUT_OF_STOCK') {
          this.tally.outOfStock += 1;
          return;
        }
        last = `${answer.status} ${answer.text.slice(0, 200)}`;
        const retryable =
          answer.status === 503 || (answer.status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE');
        if (!retryable) {
          if (answer.status >= 500) this.tally.unexpected5xx.push(`POST /v1/checkout ${key}: ${last}`);
          else this.tally.failed.push(`POST /v1/checkout ${key}: ${last}`);
          return;
        }
      } catch (error) {
        last = (error as Error).message; // the order service is away (killed, restarting): retry with the key
      }
      this.tally.retries += 1;
      await delay(backoff);
    }
    this.tally.failed.push(`POST /v1/checkout ${key}: no answer within the deadline, last ${last}`);
  }
}
