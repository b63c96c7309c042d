import {
  ConservationInput,
  ConservationVerdict,
  StockSnapshot,
  checkConservation,
  fetchConservationInput,
  loadStackConfig,
  waitFor,
} from '@checkout/testing';
import { SERVICES, runningPid } from '@checkout/local-stack';
import { CheckoutOutcome, DemoApi } from '../http/demo-api';
import { PaidWatch } from '../kafka/paid-watch';
import { Progress, ProgressSink } from '../report/progress';
import { formatMs, tally } from '../report/stats';
import { EndingHints, sagaEnded, waitForSagas } from './saga-wait';

/** What every replay shares: the API client, the Kafka watches, a run id for fresh names, the deadline. */
export interface ReplayContext {
  api: DemoApi;
  paid: PaidWatch;
  hints: EndingHints;
  /** Short and unique per run: SKUs, idempotency keys and customers are fresh. */
  runId: string;
  /** How long the sagas of one replay may take to end before they are reported stuck. */
  deadlineMs: number;
  log: (line: string) => void;
  sink?: ProgressSink;
}

/** A wave of shoppers checking out one unit each of one SKU at the same time. */
export interface CheckoutWave {
  name: string;
  sku: string;
  /** Units the SKU started with. */
  initial: number;
  token: string;
  shoppers: number;
  unitPrice: number;
}

/** One expectation of a replay and whether it held. */
export interface Expectation {
  ok: boolean;
  text: string;
}

/** Everything a replay measured, read back through the public APIs and Kafka. */
export interface WaveResult {
  wave: CheckoutWave;
  /** HTTP answers to the checkouts: 202 accepted, 409 OUT_OF_STOCK, anything else by status and code. */
  answers: { accepted: number; outOfStock: number; other: Record<string, number> };
  /** Final order statuses of the accepted checkouts. */
  statuses: Record<string, number>;
  stock: StockSnapshot | null;
  /** Successful charges and refunds at the PSP (its `_ledger`). */
  charges: number;
  refunds: number;
  /** Orders with more than one successful charge. */
  chargedTwice: number;
  /** Payments that went through `unknown` (the PSP answered after payment's timeout). */
  sawUnknown: number;
  verdict: ConservationVerdict;
  input: ConservationInput;
  /** First checkout sent -> last saga seen ended (or the deadline). */
  wallMs: number;
  checkoutsMs: number;
  /** Checkout accepted (202 received) -> its order.paid on Kafka, per paid order. */
  paidLatencyMs: number[];
  /** Orders that went PAID whose order.paid never showed up on Kafka. */
  paidMissing: number;
  /** order.paid events on Kafka stamped before their checkout was even sent (must be 0: causality). */
  paidBeforeRequested: number;
  allEnded: boolean;
  /** Services whose process changed while the replay ran (someone restarted them). */
  restarted: string[];
}

/** The pid of every service of the local stack now (from its run folder), to notice restarts. */
function servicePids(): Record<string, number | undefined> {
  const { run } = loadStackConfig();
  return Object.fromEntries(SERVICES.map((s) => [s.name, runningPid(run, s.name)]));
}

const VERDICT_SETTLE_MS = 15_000;

/**
 * Runs one wave through the real system: every shopper's `POST /v1/checkout` at once (distinct idempotency
 * keys and customers), then waits for every saga to end, for each paid order's `order.paid` on Kafka, and
 * checks conservation over the SKU and the orders. The counters of a service may lag its last event by a
 * moment (inventory releases a hold while order already shows CANCELLED), so a violation is read again for a
 * few seconds before it stands.
 */
export async function runWave(ctx: ReplayContext, wave: CheckoutWave): Promise<WaveResult> {
  const { api } = ctx;
  const slug = wave.sku.toLowerCase();
  const before = servicePids();
  const started = Date.now();
  const settled = await Promise.allSettled(
    Array.from({ length: wave.shoppers }, (_, i) =>
      api.checkout({
        idempotencyKey: `demo-${slug}-${i}`,
        customerId: `shopper-${slug}-${i}`,
        sku: wave.sku,
        unitPrice: wave.unitPrice,
        token: wave.token,
      }),
    ),
  );
  const checkoutsMs = Date.now() - started;
  const outcomes: CheckoutOutcome[] = [];
  const other: Record<string, number> = {};
  for (const s of settled) {
    if (s.status === 'fulfilled') outcomes.push(s.value);
    else {
      const reason = `failed: ${(s.reason as Error).message}`.slice(0, 120);
      other[reason] = (other[reason] ?? 0) + 1;
    }
  }
  const accepted = outcomes.filter((o) => o.kind === 'accepted');
  let outOfStock = 0;
  for (const o of outcomes) {
    if (o.kind !== 'refused') continue;
    if (o.status === 409 && o.error === 'OUT_OF_STOCK') outOfStock += 1;
    else other[`${o.status} ${o.error}`] = (other[`${o.status} ${o.error}`] ?? 0) + 1;
  }
  ctx.log(
    `  ${wave.shoppers} checkouts answered in ${formatMs(checkoutsMs)}: ${accepted.length} accepted, ` +
      `${outOfStock} out of stock` +
      (Object.keys(other).length ? `, other: ${JSON.stringify(other)}` : ''),
  );

  const orderIds = accepted.map((o) => o.orderId);
  const sagas = await waitForSagas(api, orderIds, new Progress(`  ${wave.name}`, ctx.sink), {
    deadlineMs: ctx.deadlineMs,
    hints: ctx.hints,
  });

  const scope = { skus: [{ sku: wave.sku, initial: wave.initial, exclusive: true }], orderIds };
  let input = await fetchConservationInput(api.target, scope);
  let verdict = checkConservation(input);
  const settleUntil = Date.now() + VERDICT_SETTLE_MS;
  while (!verdict.ok && Date.now() < settleUntil) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    input = await fetchConservationInput(api.target, scope);
    verdict = checkConservation(input);
  }
  const after = servicePids();
  const restarted = Object.keys(before).filter((name) => before[name] !== after[name]);

  // Every order that got as far as PAID published order.paid through the outbox; wait for each on Kafka.
  const wentPaid = input.orders
    .filter((o) => o.order?.history?.some((h) => h.to === 'PAID'))
    .map((o) => o.orderId);
  await waitFor(
    'order.paid of every paid order on Kafka',
    async () => (wentPaid.every((id) => ctx.paid.paid(id)) ? true : undefined),
    { timeoutMs: 15_000, intervalMs: 200 },
  ).catch(() => undefined);
  const acceptedAt = new Map(accepted.map((o) => [o.orderId, o.at]));
  const requestedAt = new Map(accepted.map((o) => [o.orderId, o.sentAt]));
  const paidBeforeRequested = wentPaid.filter((id) => {
    const seen = ctx.paid.paid(id);
    return seen !== undefined && seen.onKafkaAt < requestedAt.get(id)!;
  }).length;
  const paidLatencyMs = wentPaid.flatMap((id) => {
    const seen = ctx.paid.paid(id);
    return seen ? [seen.onKafkaAt - acceptedAt.get(id)!] : [];
  });

  const succeeded = (o: ConservationInput['orders'][number]) =>
    o.ledger.charges.filter((c) => c.status === 'succeeded').length;
  return {
    wave,
    answers: { accepted: accepted.length, outOfStock, other },
    statuses: tally(input.orders.map((o) => o.order?.status ?? 'UNKNOWN')),
    stock: input.skus[0].stock,
    charges: verdict.successfulCharges,
    refunds: verdict.refunds,
    chargedTwice: input.orders.filter((o) => succeeded(o) > 1).length,
    sawUnknown: input.orders.filter((o) => o.payments.some((p) => p.history?.some((h) => h.to === 'unknown')))
      .length,
    verdict,
    input,
    wallMs: sagas.endedAt - started,
    checkoutsMs,
    paidLatencyMs,
    paidMissing: wentPaid.length - paidLatencyMs.length,
    paidBeforeRequested,
    allEnded: sagas.allEnded && input.orders.every((o) => sagaEnded(o.order?.status ?? 'PENDING')),
    restarted,
  };
}
