import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  EventType,
  PayloadOf,
  SAGA_TOPICS,
  SagaEvent,
  TERMINAL_ORDER_STATUSES,
  dlqTopic,
  parseEvent,
} from '@checkout/contracts';
import { SeenMessage, TopicReader, formatVerdict, runConservationCheck, waitFor } from '@checkout/testing';
import {
  CheckoutApi,
  CheckoutRequest,
  NotificationView,
  OrderView,
  conservationTarget,
  uniqueSku,
} from './api';

/** Order statuses a saga ends in (docs/api.md). */
export const TERMINAL = TERMINAL_ORDER_STATUSES;

/** How long one saga path may take on a busy 2-core machine before a spec calls it lost. */
export const SAGA_TIMEOUT_MS = 90_000;

/**
 * Every saga event and every dead-lettered message on Kafka, read from the beginning; each message of a
 * watched saga is validated against its contract (libs/contracts) as it arrives, a violation is kept for the
 * spec to fail on.
 */
export class SagaEvents {
  private readonly reader = new TopicReader([...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic)]);
  private readonly dlqTopics = new Set(SAGA_TOPICS.map(dlqTopic));

  /** Starts reading; resolves once the consumer runs (messages keep arriving in the background). */
  async start(): Promise<this> {
    await this.reader.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.reader.stop();
  }

  private raw(orderId: string): SeenMessage[] {
    return this.reader.matching((m) => m.key === orderId && !this.dlqTopics.has(m.topic));
  }

  /** The saga's events, validated, one per eventId (Kafka delivers at least once), in arrival order. */
  of(orderId: string): SagaEvent[] {
    const seen = new Map<string, SagaEvent>();
    for (const m of this.raw(orderId)) {
      const event = parseEvent(m.value ?? '');
      assert.equal(event.type, m.topic, `event ${event.eventId} of ${orderId} is on topic ${m.topic}`);
      assert.equal(
        event.sagaId,
        orderId,
        `event ${event.eventId} keyed ${orderId} has sagaId ${event.sagaId}`,
      );
      if (!seen.has(event.eventId)) seen.set(event.eventId, event);
    }
    return [...seen.values()];
  }

  /** The saga's events of one type. */
  ofType<T extends EventType>(orderId: string, type: T): SagaEvent<T>[] {
    return this.of(orderId).filter((e): e is SagaEvent<T> => e.type === type);
  }

  /** How many distinct events of each type the saga has. */
  counts(orderId: string): Partial<Record<EventType, number>> {
    const counts: Partial<Record<EventType, number>> = {};
    for (const e of this.of(orderId)) counts[e.type] = (counts[e.type] ?? 0) + 1;
    return counts;
  }

  /** Waits until the saga has an event of this type (matching `where`); returns the first one. */
  async waitFor<T extends EventType>(
    orderId: string,
    type: T,
    where: (payload: PayloadOf<T>) => boolean = () => true,
    timeoutMs = SAGA_TIMEOUT_MS,
  ): Promise<SagaEvent<T>> {
    return waitFor(
      `${type} of order ${orderId} on Kafka`,
      async () => this.ofType(orderId, type).find((e) => where(e.payload as PayloadOf<T>)),
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** Messages about the saga that a consumer parked on a dead-letter topic. */
  deadLettered(orderId: string): SeenMessage[] {
    return this.reader.matching((m) => m.key === orderId && this.dlqTopics.has(m.topic));
  }
}

/** What a spec expects of a saga's events on Kafka: exactly these counts, none of the forbidden types. */
export interface ExpectedEvents {
  /** Types that must appear, with how many distinct events of each. */
  exactly: Partial<Record<EventType, number>>;
  /** Types that must not appear at all. */
  never?: EventType[];
}

/**
 * One spec's saga paths: the SKUs it set up (with their initial stock, for the conservation checker) and the
 * orders it placed, all through the public APIs of one tenant.
 */
export class SagaScenario {
  readonly api: CheckoutApi;
  readonly skus = new Map<string, number>();
  readonly orders: string[] = [];

  constructor(
    readonly events: SagaEvents,
    tenant: 'acme' | 'globex' = 'acme',
  ) {
    this.api = new CheckoutApi(tenant);
  }

  /**
   * A new SKU priced at `unitPrice` VND with `available` units; the prefix says what it is for (the carrier
   * refuses `UNSHIPPABLE-*`).
   */
  async sku(
    prefix: string,
    available: number,
    opts: { unitPrice?: number; allowBackorder?: boolean; reservationTtlSeconds?: number } = {},
  ): Promise<string> {
    const sku = uniqueSku(prefix);
    await this.api.setPrice(sku, opts.unitPrice ?? 50_000);
    const stock = await this.api.setStock(sku, {
      available,
      allowBackorder: opts.allowBackorder ?? false,
      reservationTtlSeconds: opts.reservationTtlSeconds,
    });
    assert.deepEqual(
      { available: stock.available, reserved: stock.reserved, sold: stock.sold },
      { available, reserved: 0, sold: 0 },
    );
    this.skus.set(sku, available);
    return sku;
  }

  /** Records a restock of `delta` units (for the conservation checker's initial + restocks). */
  async restock(sku: string, available: number, flags: { allowBackorder?: boolean } = {}): Promise<void> {
    const before = await this.api.stock(sku);
    await this.api.setStock(sku, { available, ...flags });
    this.skus.set(sku, (this.skus.get(sku) ?? 0) + (available - before.available));
  }

  /** A checkout body: one unit of each SKU, a fresh customer unless given. */
  body(
    skus: string | string[],
    token: string,
    extra: Partial<Omit<CheckoutRequest, 'lines' | 'payment'>> = {},
  ): CheckoutRequest {
    return {
      customerId: `e2e-${randomUUID()}`,
      currency: 'VND',
      lines: (Array.isArray(skus) ? skus : [skus]).map((sku) => ({ sku, quantity: 1 })),
      payment: { token },
      ...extra,
    };
  }

  /** Places an order that must be accepted, and remembers it for the conservation check. */
  async place(body: CheckoutRequest): Promise<string> {
    const orderId = await this.api.placeOrder(body);
    this.orders.push(orderId);
    return orderId;
  }

  /** Waits until the order reaches `status`; fails at once if it ends in another terminal status. */
  async settle(orderId: string, status: OrderView['status']): Promise<OrderView> {
    const order = await waitFor(
      `order ${orderId} to become ${status}`,
      async () => {
        const o = await this.api.order(orderId);
        const ended = (TERMINAL as readonly string[]).includes(o.status) && !this.mayLeave(o.status, status);
        return o.status === status || ended ? o : undefined;
      },
      { timeoutMs: SAGA_TIMEOUT_MS, intervalMs: 200 },
    );
    assert.equal(order.status, status, `order ${orderId}: expected ${status}, ${describeOrder(order)}`);
    return order;
  }

  /**
   * Terminal statuses that still move on: a cancelled or paid-and-served order can still be refunded, and a
   * backordered one ships once a restock fills its backorder.
   */
  private mayLeave(from: string, to: string): boolean {
    if (from === 'BACKORDERED' && (to === 'PAID' || to === 'SHIPPED')) return true;
    return to === 'REFUNDED' && ['CANCELLED', 'SHIPPED', 'BACKORDERED'].includes(from);
  }

  /** Checks the saga's events on Kafka once `last` (a type that comes last) has arrived. */
  async expectEvents(orderId: string, last: EventType, expected: ExpectedEvents): Promise<void> {
    await this.events.waitFor(orderId, last);
    const wanted = Object.entries(expected.exactly) as [EventType, number][];
    // Events of different topics arrive in any order: wait for every expected one before judging.
    await waitFor(
      `the events ${wanted.map(([t, n]) => `${n} x ${t}`).join(', ')} of ${orderId}`,
      async () => {
        const counts = this.events.counts(orderId);
        return wanted.every(([t, n]) => (counts[t] ?? 0) >= n);
      },
      { timeoutMs: SAGA_TIMEOUT_MS, intervalMs: 100 },
    );
    const counts = this.events.counts(orderId);
    for (const [type, n] of wanted)
      assert.equal(
        counts[type],
        n,
        `order ${orderId}: ${n} x ${type} expected, saw ${JSON.stringify(counts)}`,
      );
    for (const type of expected.never ?? [])
      assert.equal(
        counts[type] ?? 0,
        0,
        `order ${orderId}: no ${type} expected, saw ${JSON.stringify(counts)}`,
      );
    assert.deepEqual(
      this.events.deadLettered(orderId).map((m) => `${m.topic}: ${m.value?.slice(0, 200)}`),
      [],
      `order ${orderId}: nothing dead-lettered`,
    );
  }

  /** The PSP ledger of an order, summarised: successful charges, failed charges, refunds, amounts. */
  async ledger(orderId: string) {
    const l = await this.api.ledger(orderId);
    return {
      succeeded: l.charges.filter((c) => c.status === 'succeeded').length,
      failed: l.charges.filter((c) => c.status === 'failed').length,
      refunds: l.refunds.length,
      charged: l.charges.filter((c) => c.status === 'succeeded').reduce((s, c) => s + c.amount, 0),
      refunded: l.refunds.reduce((s, r) => s + r.amount, 0),
      raw: l,
    };
  }

  /** Waits until the fulfillment service has recorded and sent exactly these notification kinds. */
  async notificationsSent(orderId: string, kinds: NotificationView['kind'][]): Promise<NotificationView[]> {
    const expected = [...kinds].sort();
    const kindsOf = (n: NotificationView[]) => n.map((x) => x.kind).sort();
    const notifications = await waitFor(
      `notifications ${expected.join(', ') || '(none)'} of ${orderId} sent`,
      async () => {
        const n = await this.api.notifications(orderId);
        // More kinds than expected will not go away: stop waiting and let the assertion say so.
        if (n.length > expected.length) return n;
        return (
          JSON.stringify(kindsOf(n)) === JSON.stringify(expected) && n.every((x) => x.status === 'sent') && n
        );
      },
      { timeoutMs: SAGA_TIMEOUT_MS },
    );
    assert.deepEqual(kindsOf(notifications), expected, `order ${orderId}: notifications`);
    return notifications;
  }

  /**
   * The conservation checker (libs/testing) over this scenario's SKUs and orders, through the services'
   * HTTP APIs: stock conserved, at most one charge per order, charges - refunds = money of paid orders,
   * every saga ended, and (the SKUs are the scenario's alone) units sold = units of the orders that kept them.
   */
  async expectConserved(): Promise<void> {
    const verdict = await runConservationCheck(conservationTarget(this.api.tenant), {
      // Every order that touched these SKUs is this scenario's: the checker also matches sold units to orders.
      skus: [...this.skus].map(([sku, initial]) => ({ sku, initial, exclusive: true })),
      orderIds: this.orders,
    });
    assert.ok(verdict.clean, formatVerdict(verdict));
    assert.equal(verdict.orders, this.orders.length);
    assert.equal(verdict.skus, this.skus.size);
  }
}

/** The order's status, payment state and history in one line, for failure messages. */
export function describeOrder(o: OrderView): string {
  return `${o.status} (payment ${o.paymentState ?? 'none'}): ${o.history.map((h) => `${h.to} after ${h.cause}`).join(' -> ')}`;
}
