/**
 * The conservation checker of PRODUCT.md section 7: after a run, stock is conserved per SKU, no order was
 * charged twice, the money kept equals the money of the orders that kept it, and every saga ended (or is
 * reported stuck with its last step). `checkConservation` is pure; `fetchConservationInput` only reads the
 * services' public HTTP APIs.
 */

/** Order statuses a saga ends in. */
export const TERMINAL_STATUSES = ['SHIPPED', 'REJECTED', 'CANCELLED', 'BACKORDERED', 'REFUNDED'] as const;

/** Order statuses in which the merchant keeps the customer's money. */
export const MONEY_KEPT_STATUSES = ['PAID', 'SHIPPED', 'BACKORDERED'] as const;

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
  history?: Record<string, unknown>[];
}

/** What the checker looks at: each SKU with its initial stock, each order with its payments and ledger. */
export interface ConservationInput {
  skus: { sku: string; initial: number; stock: StockSnapshot | null }[];
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
const isTerminal = (status: string) => (TERMINAL_STATUSES as readonly string[]).includes(status);
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

/** One line for humans: the verdict, the headline numbers, and what broke. */
export function formatVerdict(v: ConservationVerdict): string {
  const statuses = Object.entries(v.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  const money = v.money.map((m) => `${m.charged - m.refunded} ${m.currency} kept`).join(', ');
  const head =
    `conservation ${v.ok ? 'OK' : 'VIOLATED'}: ${v.skus} SKUs, ${v.orders} orders` +
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
}

/** What to check: SKUs with their initial stock (initial + restocks) and the run's order ids. */
export interface ConservationScope {
  skus: Record<string, number> | { sku: string; initial: number }[];
  orderIds: string[];
}

async function getJson(url: string, apiKey: string, timeoutMs: number): Promise<unknown | null> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

const listIn = (body: unknown, ...keys: string[]): Record<string, unknown>[] => {
  if (Array.isArray(body)) return body;
  for (const k of keys) {
    const v = (body as Record<string, unknown> | null)?.[k];
    if (Array.isArray(v)) return v;
  }
  return [];
};

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

/** Reads stock, orders, payments and the PSP ledger over HTTP (PRODUCT.md sections 4 and 6). */
export async function fetchConservationInput(
  target: ConservationTarget,
  scope: ConservationScope,
): Promise<ConservationInput> {
  const { apiKey, concurrency = 8, timeoutMs = 10_000 } = target;
  const get = (url: string) => getJson(url, apiKey, timeoutMs);
  const skuList = Array.isArray(scope.skus)
    ? scope.skus
    : Object.entries(scope.skus).map(([sku, initial]) => ({ sku, initial }));
  const skus = await mapLimited(skuList, concurrency, async ({ sku, initial }) => ({
    sku,
    initial,
    stock: (await get(`${target.inventoryUrl}/v1/stock/${encodeURIComponent(sku)}`)) as StockSnapshot | null,
  }));
  const orders = await mapLimited(scope.orderIds, concurrency, async (orderId) => {
    const id = encodeURIComponent(orderId);
    const [order, payments, ledger] = await Promise.all([
      get(`${target.orderUrl}/v1/orders/${id}`),
      get(`${target.paymentUrl}/v1/payments?orderId=${id}`),
      get(`${target.pspUrl}/v1/_ledger?reference=${id}`),
    ]);
    return {
      orderId,
      order: order as OrderSnapshot | null,
      payments: listIn(payments, 'payments', 'items').map((p) => ({
        ...p,
        state: String(p.state ?? p.status ?? 'unknown'),
      })) as PaymentAttempt[],
      ledger: {
        charges: listIn(ledger, 'charges') as unknown as LedgerCharge[],
        refunds: listIn(ledger, 'refunds') as unknown as LedgerRefund[],
      },
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
