import { randomUUID } from 'node:crypto';
import { isTerminalStatus } from '@checkout/contracts';
import { CheckoutApi, CheckoutAccepted, SERVICE_URLS, uniqueCustomer, uniqueSku } from '@checkout/e2e';
import { StackConfig } from '@checkout/local-stack';
import {
  ConservationVerdict,
  TopicReader,
  loadStackConfig,
  runConservationCheck,
  waitFor,
} from '@checkout/testing';

/** What a scenario gets from the runner: the stack's settings (ports, directories). */
export interface ScenarioStack {
  config: StackConfig;
}

/** The stack this process is configured for (STACK_PORT_OFFSET, STACK_DIR). */
export const currentStack = (): ScenarioStack => ({ config: loadStackConfig() });

/** One row of the chaos table (issue 18): what ran, what ended, what broke, how long recovery took. */
export interface ScenarioResult {
  scenario: string;
  orders: number;
  terminal: number;
  stuck: number;
  doubleCharges: number;
  doubleRefunds: number;
  lostEvents: number;
  /** From the end of the fault to the last saga reaching a terminal status (ms). */
  timeToRecoverMs: number | null;
  violations: string[];
  /** Scenario-specific figures (e.g. refused webhooks). */
  details: Record<string, number | string>;
  ok: boolean;
}

/** A checkout mix of the run: unique SKUs with their stock, the tokens to pick from. */
export interface Mix {
  skus: Record<string, number>;
  tokens: readonly string[];
}

/** Creates `count` fresh SKUs (price and stock) for a run; returns their initial stock. */
export async function freshSkus(
  api: CheckoutApi,
  prefix: string,
  count: number,
  stock: number,
): Promise<Record<string, number>> {
  const skus: Record<string, number> = {};
  for (let i = 0; i < count; i += 1) {
    const sku = uniqueSku(prefix);
    await api.setPrice(sku, 10_000);
    await api.setStock(sku, { available: stock });
    skus[sku] = stock;
  }
  return skus;
}

/** How the checkouts of a run were answered in the end. */
export interface Placed {
  orderIds: string[];
  /** Refused for good with a 4xx (e.g. 409 OUT_OF_STOCK), by error code. */
  refused: Record<string, number>;
  /** Retried past the deadline without an answer the client could act on: the client does not know its order. */
  unresolved: number;
  retries: number;
}

/**
 * Places `count` checkouts, `perSecond` at most, each retried with its own Idempotency-Key while the answer is a
 * 503, a 409 IDEMPOTENCY_KEY_IN_USE or no answer at all (the client contract of PRODUCT.md section 4), until
 * `retryForMs` passes; a replay of an accepted key answers its order id again, so no accepted order is lost.
 */
export async function placeCheckouts(
  api: CheckoutApi,
  mix: Mix,
  count: number,
  { perSecond = 5, retryForMs = 180_000 } = {},
): Promise<Placed> {
  const skus = Object.keys(mix.skus);
  const placed: Placed = { orderIds: [], refused: {}, unresolved: 0, retries: 0 };
  const one = async (i: number) => {
    const key = randomUUID();
    const body = {
      customerId: uniqueCustomer('chaos'),
      currency: 'VND',
      lines: [{ sku: skus[i % skus.length], quantity: 1 }],
      payment: { token: mix.tokens[i % mix.tokens.length] },
    };
    const deadline = Date.now() + retryForMs;
    for (;;) {
      const answer = await api.checkout(body, key).catch(() => undefined);
      if (answer?.status === 202) {
        placed.orderIds.push(CheckoutAccepted.parse(answer.json).orderId);
        return;
      }
      const code = (answer?.json as { error?: string } | undefined)?.error;
      const retryable =
        !answer || answer.status === 503 || (answer.status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE');
      if (!retryable) {
        const what = `${answer.status} ${code ?? ''}`.trim();
        placed.refused[what] = (placed.refused[what] ?? 0) + 1;
        return;
      }
      if (Date.now() > deadline) {
        placed.unresolved += 1;
        return;
      }
      placed.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const inFlight: Promise<void>[] = [];
  const start = Date.now();
  for (let i = 0; i < count; i += 1) {
    // Paced: checkout i leaves at start + i / perSecond.
    const wait = start + (i * 1000) / perSecond - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(one(i));
  }
  await Promise.all(inFlight);
  return placed;
}

/** The refusals of a run as one figure for the result row, e.g. "409 OUT_OF_STOCK x3". */
export const refusals = (refused: Record<string, number>): string =>
  Object.entries(refused)
    .map(([what, n]) => `${what} x${n}`)
    .join(', ') || 'none';

/** Waits until every order is terminal or the deadline passes; returns when the last one got there (ms epoch). */
export async function waitTerminal(
  api: CheckoutApi,
  orderIds: string[],
  timeoutMs: number,
): Promise<number | null> {
  const pending = new Set(orderIds);
  try {
    await waitFor(
      `${orderIds.length} sagas terminal`,
      async () => {
        for (const id of [...pending]) {
          const order = await api.order(id).catch(() => undefined);
          if (order && isTerminalStatus(order.status)) pending.delete(id);
        }
        return pending.size === 0;
      },
      { timeoutMs, intervalMs: 1_000 },
    );
    return Date.now();
  } catch {
    return null;
  }
}

/** The conservation checker (libs/testing) over the run's SKUs and orders, through the public APIs. */
export function conservation(api: CheckoutApi, mix: Mix, orderIds: string[]): Promise<ConservationVerdict> {
  return runConservationCheck(
    {
      orderUrl: SERVICE_URLS.order,
      inventoryUrl: SERVICE_URLS.inventory,
      paymentUrl: SERVICE_URLS.payment,
      pspUrl: SERVICE_URLS.psp,
      apiKey: api.key,
    },
    {
      skus: Object.entries(mix.skus).map(([sku, initial]) => ({ sku, initial, exclusive: true })),
      orderIds,
    },
  );
}

/**
 * Lost events: orders accepted over HTTP whose `order.created` never reached Kafka, plus orders that reached a
 * money-kept status without their `order.paid` on Kafka (the outbox relay lost a row).
 */
export async function lostEvents(reader: TopicReader, api: CheckoutApi, orderIds: string[]): Promise<number> {
  let lost = 0;
  for (const id of orderIds) {
    const created = reader.messages.some((m) => m.topic === 'order.created' && m.key === id);
    const order = await api.order(id).catch(() => undefined);
    const paid = reader.messages.some((m) => m.topic === 'order.paid' && m.key === id);
    if (!created) lost += 1;
    if (order && ['PAID', 'SHIPPED'].includes(order.status) && !paid) lost += 1;
  }
  return lost;
}

/** The result row from a verdict and the run's figures. */
export function resultRow(
  scenario: string,
  verdict: ConservationVerdict,
  figures: { orders: number; lostEvents: number; faultEndedAt: number; lastTerminalAt: number | null },
  details: Record<string, number | string>,
  extraViolations: string[] = [],
): ScenarioResult {
  const doubleCharges = verdict.violations.filter((v) => v.kind === 'double_charge').length;
  const doubleRefunds = verdict.violations.filter((v) => v.kind === 'double_refund').length;
  const violations = [
    ...verdict.violations.map((v) => `${v.kind} ${v.subject}: ${v.message}`),
    ...extraViolations,
  ];
  const terminal = figures.orders - verdict.stuck.length;
  return {
    scenario,
    orders: figures.orders,
    terminal,
    stuck: verdict.stuck.length,
    doubleCharges,
    doubleRefunds,
    lostEvents: figures.lostEvents,
    timeToRecoverMs:
      figures.lastTerminalAt === null ? null : Math.max(0, figures.lastTerminalAt - figures.faultEndedAt),
    violations,
    details,
    ok: violations.length === 0 && verdict.stuck.length === 0 && figures.lostEvents === 0,
  };
}
