/**
 * The conservation checker (never oversell, never double-charge, every saga ends): after a run, stock is
 * conserved per SKU, no order was charged twice, the money kept equals the money of the orders that kept it,
 * and every saga ended (or is reported stuck with its last step). For a SKU the run owns alone, the units sold
 * also equal the units of the orders that kept them, and nothing stays reserved once its orders ended.
 * `checkConservation` is pure; `fetchConservationInput` only reads the services' public HTTP APIs and validates
 * every answer.
 */
import { z } from 'zod';
import {
  LedgerCharge,
  LedgerRefund,
  ORDER_STATUSES,
  OrderView,
  PAYMENT_STATES,
  PaymentTransitionView,
  PaymentView,
  PricedLine,
  StockView,
  TERMINAL_ORDER_STATUSES,
} from '@checkout/contracts';

export { ORDER_STATUSES, PAYMENT_STATES };

/** Order statuses in which the merchant keeps the customer's money. */
export const MONEY_KEPT_STATUSES = ['PAID', 'SHIPPED', 'BACKORDERED'] as const;

/** Order statuses whose units left the shelf as sold (a backordered order is owed units, not sold ones). */
export const SOLD_STATUSES = ['PAID', 'SHIPPED'] as const;

/** Stock of one SKU as `GET inventory /v1/stock/{sku}` answers it (`returned` if a variant reports it). */
export interface StockSnapshot {
  sku: string;
  available: number;
  reserved: number;
  sold: number;
  returned?: number;
}

/** One payment attempt as `GET payment /v1/payments?orderId=` answers it. */
export interface PaymentAttempt {
  paymentId?: string;
  state: string;
  amount?: number;
  currency?: string;
  /** Its state transitions, oldest first, e.g. pending -> unknown (a PSP timeout) -> succeeded. */
  history?: { from: string; to: string; source: string }[];
}

/** A charge in the PSP ledger. */
export interface LedgerCharge {
  id: string;
  amount: number;
  currency: string;
  status: string;
}

/** A refund in the PSP ledger. */
export interface LedgerRefund {
  id: string;
  charge?: string;
  amount: number;
  currency: string;
  status?: string;
}

/** The order as `GET order /v1/orders/{id}` answers it (only the fields the checker reads). */
export interface OrderSnapshot {
  orderId: string;
  status: string;
  total: number;
  currency: string;
  paymentState?: string | null;
  updatedAt?: string;
  /** The snapshotted lines; needed for the sold-units check of an exclusive SKU. */
  lines?: { sku: string; quantity: number }[];
  history?: Record<string, unknown>[];
}

/**
 * A SKU of the run: its initial stock (initial + restocks) and what inventory says now. `exclusive`: every order
 * that holds this SKU is among the input's orders (a fresh SKU of the run), which allows the sold-units and
 * leaked-reservation checks.
 */
export interface SkuEntry {
  sku: string;
  initial: number;
  stock: StockSnapshot | null;
  exclusive?: boolean;
}

/** What the checker looks at: each SKU with its initial stock, each order with its payments and ledger. */
export interface ConservationInput {
  skus: SkuEntry[];
  orders: {
    orderId: string;
    order: OrderSnapshot | null;
    payments: PaymentAttempt[];
    ledger: { charges: LedgerCharge[]; refunds: LedgerRefund[] };
  }[];
}

/** Kinds of broken guarantees. */
export type ViolationKind =
  | 'missing_sku'
  | 'negative_stock'
  | 'stock_not_conserved'
  | 'sold_mismatch'
  | 'reservation_leak'
  | 'missing_order'
  | 'double_charge'
  | 'double_refund'
  | 'refund_exceeds_charge'
  | 'money_mismatch';

/** One broken guarantee, about one SKU, order or currency. */
export interface Violation {
  kind: ViolationKind;
  /** The SKU, order id or currency it is about. */
  subject: string;
  message: string;
}

/** A saga that has not reached a terminal status, with the last step it took. */
export interface StuckSaga {
  orderId: string;
  status: string;
  paymentState: string | null;
  lastStep: string;
  since: string | null;
}

/** Money moved at the PSP and money the orders say was kept, per currency. */
export interface MoneyTotals {
  currency: string;
  charged: number;
  refunded: number;
  kept: number;
}

/** The checker's answer. `ok`: no violation; `clean`: no violation and no stuck saga. */
export interface ConservationVerdict {
  ok: boolean;
  clean: boolean;
  violations: Violation[];
  stuck: StuckSaga[];
  skus: number;
  orders: number;
  byStatus: Record<string, number>;
  successfulCharges: number;
  refunds: number;
  money: MoneyTotals[];
}

const SUCCEEDED_CHARGE = new Set(['succeeded']);
const SUCCEEDED_PAYMENT = new Set(['succeeded', 'refunded']);
const isTerminal = (status: string) => (TERMINAL_ORDER_STATUSES as readonly string[]).includes(status);
const keepsMoney = (status: string) => (MONEY_KEPT_STATUSES as readonly string[]).includes(status);
const refundCounts = (r: LedgerRefund) => r.status === undefined || r.status === 'succeeded';

/** Checks the guarantees over data already fetched; never throws on bad data, reports it. */
export function checkConservation(input: ConservationInput): ConservationVerdict {
  const violations: Violation[] = [];
  const add = (kind: ViolationKind, subject: string, message: string) =>
    violations.push({ kind, subject, message });

  for (const { sku, initial, stock } of input.skus) {
    if (!stock) {
      add('missing_sku', sku, `inventory does not know SKU ${sku}`);
      continue;
    }
    const returned = stock.returned ?? 0;
    for (const [field, value] of Object.entries({
      available: stock.available,
      reserved: stock.reserved,
      sold: stock.sold,
      returned,
    })) {
      if (value < 0) add('negative_stock', sku, `${sku}: ${field} is ${value}`);
    }
    const sum = stock.available + stock.reserved + stock.sold + returned;
    if (sum !== initial) {
      const parts =
        `available ${stock.available} + reserved ${stock.reserved} + sold ${stock.sold}` +
        (stock.returned !== undefined ? ` + returned ${returned}` : '');
      add('stock_not_conserved', sku, `${sku}: initial ${initial} != ${parts} = ${sum}`);
    }
  }

  const stuck: StuckSaga[] = [];
  const byStatus: Record<string, number> = {};
  const money = new Map<string, MoneyTotals>();
  const totals = (currency: string) => {
    let t = money.get(currency);
    if (!t) money.set(currency, (t = { currency, charged: 0, refunded: 0, kept: 0 }));
    return t;
  };
  let successfulCharges = 0;
  let refundCount = 0;

  for (const { orderId, order, payments, ledger } of input.orders) {
    const charges = ledger.charges.filter((c) => SUCCEEDED_CHARGE.has(c.status));
    const refunds = ledger.refunds.filter(refundCounts);
    successfulCharges += charges.length;
    refundCount += refunds.length;
    if (charges.length > 1)
      add(
        'double_charge',
        orderId,
        `order ${orderId}: ${charges.length} successful charges at the PSP (${charges.map((c) => c.id).join(', ')})`,
      );
    const paidAttempts = payments.filter((p) => SUCCEEDED_PAYMENT.has(p.state));
    if (paidAttempts.length > 1)
      add('double_charge', orderId, `order ${orderId}: ${paidAttempts.length} successful payment attempts`);
    const refundsPerCharge = new Map<string, number>();
    for (const r of refunds)
      if (r.charge) refundsPerCharge.set(r.charge, (refundsPerCharge.get(r.charge) ?? 0) + 1);
    for (const [charge, n] of refundsPerCharge)
      if (n > 1) add('double_refund', orderId, `order ${orderId}: charge ${charge} refunded ${n} times`);

    const net = new Map<string, number>();
    for (const c of charges) {
      totals(c.currency).charged += c.amount;
      net.set(c.currency, (net.get(c.currency) ?? 0) + c.amount);
    }
    for (const r of refunds) {
      totals(r.currency).refunded += r.amount;
      net.set(r.currency, (net.get(r.currency) ?? 0) - r.amount);
    }
    for (const [currency, amount] of net)
      if (amount < 0)
        add(
          'refund_exceeds_charge',
          orderId,
          `order ${orderId}: refunded ${-amount} ${currency} more than charged`,
        );

    if (!order) {
      add('missing_order', orderId, `order service does not know order ${orderId}`);
      continue;
    }
    byStatus[order.status] = (byStatus[order.status] ?? 0) + 1;
    const kept = keepsMoney(order.status) ? order.total : 0;
    if (kept > 0) totals(order.currency).kept += kept;
    const currencies = new Set([...net.keys(), order.currency]);
    for (const currency of currencies) {
      const expected = currency === order.currency ? kept : 0;
      const actual = net.get(currency) ?? 0;
      if (actual !== expected)
        add(
          'money_mismatch',
          orderId,
          `order ${orderId} (${order.status}): charges - refunds = ${actual} ${currency}, expected ${expected}`,
        );
    }
    if (!isTerminal(order.status)) stuck.push(stuckSaga(order));
  }

  for (const { sku, stock, exclusive } of input.skus)
    if (exclusive && stock) checkExclusiveSku(sku, stock, input, add);

  const moneyTotals = [...money.values()].sort((a, b) => a.currency.localeCompare(b.currency));
  for (const t of moneyTotals)
    if (t.charged - t.refunded !== t.kept)
      add(
        'money_mismatch',
        t.currency,
        `${t.currency}: charges ${t.charged} - refunds ${t.refunded} = ${t.charged - t.refunded}, paid orders hold ${t.kept}`,
      );

  return {
    ok: violations.length === 0,
    clean: violations.length === 0 && stuck.length === 0,
    violations,
    stuck,
    skus: input.skus.length,
    orders: input.orders.length,
    byStatus,
    successfulCharges,
    refunds: refundCount,
    money: moneyTotals,
  };
}

/**
 * For a SKU only the run's orders hold: once every one of them ended, the units sold equal the units of the
 * orders that kept them as sold (a lost update or a double commit shows here even when the counters add up),
 * and no unit stays reserved for an order that will never pay.
 */
function checkExclusiveSku(
  sku: string,
  stock: StockSnapshot,
  input: ConservationInput,
  add: (kind: ViolationKind, subject: string, message: string) => void,
): void {
  let soldUnits = 0;
  for (const { order } of input.orders) {
    const units = (order?.lines ?? []).filter((l) => l.sku === sku).reduce((n, l) => n + l.quantity, 0);
    if (!order || units === 0) continue;
    if (!isTerminal(order.status) && order.status !== 'PAID') return; // still moving: stuck is reported instead
    // Still backordered: owed, not sold. Backordered once and then paid or shipped: a restock filled it.
    const owed = order.status === 'BACKORDERED';
    if ((SOLD_STATUSES as readonly string[]).includes(order.status) && !owed) soldUnits += units;
  }
  if (stock.sold !== soldUnits)
    add(
      'sold_mismatch',
      sku,
      `${sku}: inventory sold ${stock.sold}, the run's paid and shipped orders hold ${soldUnits} units`,
    );
  if (stock.reserved !== 0)
    add('reservation_leak', sku, `${sku}: ${stock.reserved} units still reserved after every order ended`);
}

/** The last step of a saga as its history tells it (the order service's history rows, whatever their shape). */
function stuckSaga(order: OrderSnapshot): StuckSaga {
  const last = order.history?.[order.history.length - 1];
  const text = (...keys: string[]) => {
    for (const k of keys) {
      const v = last?.[k];
      if (typeof v === 'string' && v.length > 0) return v;
    }
    return null;
  };
  const to = text('toStatus', 'to_status', 'to', 'status') ?? order.status;
  const cause = text('cause', 'event', 'eventType', 'reason');
  return {
    orderId: order.orderId,
    status: order.status,
    paymentState: order.paymentState ?? null,
    lastStep: cause ? `${to} after ${cause}` : to,
    since: text('at', 'occurredAt', 'createdAt', 'created_at') ?? order.updatedAt ?? null,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One line for humans: the verdict, the headline numbers, and what broke. */
export function formatVerdict(v: ConservationVerdict): string {
  const statuses = Object.entries(v.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  const money = v.money.map((m) => `${m.charged - m.refunded} ${m.currency} kept`).join(', ');
  const head =
    `conservation ${v.ok ? 'OK' : 'VIOLATED'}: ${plural(v.skus, 'SKU')}, ${plural(v.orders, 'order')}` +
    (statuses ? ` (${statuses})` : '') +
    `, charges ${v.successfulCharges}, refunds ${v.refunds}` +
    (money ? `, ${money}` : '') +
    `, stuck ${v.stuck.length}`;
  const parts = [head];
  if (!v.ok) {
    const kinds = new Map<string, number>();
    for (const x of v.violations) kinds.set(x.kind, (kinds.get(x.kind) ?? 0) + 1);
    parts.push(
      `${v.violations.length} violations (${[...kinds].map(([k, n]) => `${k} x${n}`).join(', ')}): ${v.violations[0].message}`,
    );
  }
  if (v.stuck.length > 0) {
    const s = v.stuck[0];
    parts.push(`first stuck ${s.orderId} at ${s.lastStep}${s.since ? ` since ${s.since}` : ''}`);
  }
  return parts.join('; ');
}

/** Where the services answer, and the tenant key to ask with. */
export interface ConservationTarget {
  orderUrl: string;
  inventoryUrl: string;
  paymentUrl: string;
  pspUrl: string;
  apiKey: string;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  timeoutMs?: number;
  /** How long a service may be unreachable or answer 5xx (being restarted) before the fetch fails (default 30 s). */
  unavailableMs?: number;
}

/** What to check: SKUs with their initial stock (initial + restocks) and the run's order ids. */
export interface ConservationScope {
  skus: Record<string, number> | { sku: string; initial: number; exclusive?: boolean }[];
  orderIds: string[];
}

// The answers are read with the shared contract (libs/contracts/src/http), narrowed to the fields the checker
// reads: every field kept is checked exactly as the services promise it.

/** `GET inventory /v1/stock/{sku}` (`returned` if a variant reports it). */
export const StockAnswer = StockView.pick({ sku: true, available: true, reserved: true, sold: true }).extend({
  returned: z.number().int().nonnegative().optional(),
});

/** `GET order /v1/orders/{orderId}` (the fields the checker and the demo read). */
export const OrderAnswer = OrderView.pick({
  orderId: true,
  status: true,
  customerId: true,
  total: true,
  currency: true,
  paymentState: true,
  createdAt: true,
  updatedAt: true,
  history: true,
}).extend({ lines: z.array(PricedLine.pick({ sku: true, quantity: true })).min(1) });
export type OrderAnswer = z.infer<typeof OrderAnswer>;

/** `GET payment /v1/payments?orderId=`. */
export const PaymentsAnswer = z.object({
  payments: z.array(
    PaymentView.pick({ paymentId: true, state: true, amount: true, currency: true }).extend({
      history: z.array(PaymentTransitionView.pick({ from: true, to: true, source: true })),
    }),
  ),
});

/** `GET psp /v1/_ledger?reference=` (charges and refunds; events and deliveries are not read). */
export const LedgerAnswer = z.object({
  charges: z.array(LedgerCharge.pick({ id: true, amount: true, currency: true, status: true })),
  refunds: z.array(LedgerRefund.pick({ id: true, charge: true, amount: true, currency: true, status: true })),
});

/**
 * GETs a JSON answer and validates it; null for a 404. A service that is unreachable or answers 5xx (being
 * restarted) is asked again until `unavailableMs` has passed; any other failure, or a body off contract, throws.
 */
async function getValid<T>(
  url: string,
  schema: z.ZodType<T>,
  { apiKey, timeoutMs, unavailableMs }: { apiKey: string; timeoutMs: number; unavailableMs: number },
): Promise<T | null> {
  const giveUpAt = Date.now() + unavailableMs;
  for (let backoff = 250; ; backoff = Math.min(backoff * 2, 2_000)) {
    let res: Response | undefined;
    let unavailable: string;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      unavailable = `answered ${res.status}`;
    } catch (error) {
      unavailable = `failed: ${(error as Error).message}`;
    }
    if (res && res.status < 500) {
      if (res.status === 404) return null;
      const text = await res.text();
      if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 200)}`);
      const parsed = schema.safeParse(JSON.parse(text));
      if (!parsed.success)
        throw new Error(`GET ${url}: answer off contract: ${z.prettifyError(parsed.error).slice(0, 300)}`);
      return parsed.data;
    }
    if (Date.now() + backoff > giveUpAt) throw new Error(`GET ${url} ${unavailable} for ${unavailableMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, backoff));
  }
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Reads stock, orders, payments and the PSP ledger over HTTP (docs/api.md), validated by the shared contract. */
export async function fetchConservationInput(
  target: ConservationTarget,
  scope: ConservationScope,
): Promise<ConservationInput> {
  const { apiKey, concurrency = 8, timeoutMs = 10_000, unavailableMs = 30_000 } = target;
  const get = <T>(url: string, schema: z.ZodType<T>) =>
    getValid(url, schema, { apiKey, timeoutMs, unavailableMs });
  const skuList = Array.isArray(scope.skus)
    ? scope.skus
    : Object.entries(scope.skus).map(([sku, initial]) => ({ sku, initial }));
  const skus = await mapLimited(skuList, concurrency, async (entry) => ({
    ...entry,
    stock: await get(`${target.inventoryUrl}/v1/stock/${encodeURIComponent(entry.sku)}`, StockAnswer),
  }));
  const orders = await mapLimited(scope.orderIds, concurrency, async (orderId) => {
    const id = encodeURIComponent(orderId);
    const [order, payments, ledger] = await Promise.all([
      get(`${target.orderUrl}/v1/orders/${id}`, OrderAnswer),
      get(`${target.paymentUrl}/v1/payments?orderId=${id}`, PaymentsAnswer),
      get(`${target.pspUrl}/v1/_ledger?reference=${id}`, LedgerAnswer),
    ]);
    return {
      orderId,
      order,
      payments: payments?.payments ?? [],
      ledger: ledger ?? { charges: [], refunds: [] },
    };
  });
  return { skus, orders };
}

/** Fetches and checks in one call. */
export async function runConservationCheck(
  target: ConservationTarget,
  scope: ConservationScope,
): Promise<ConservationVerdict> {
  return checkConservation(await fetchConservationInput(target, scope));
}
