import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { GateUnavailable, StockGate, redisAuthOf } from '@checkout/stock-gate';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { gateHoldId } from '../checkout/domain/request-hash';
import { OrderConfig } from '../config/order.config';
import { GateMetrics } from './gate.metrics';

/**
 * How much longer than its Idempotency-Key the gate remembers a checkout's answer. A mark that outlives the key
 * only costs a database read (the checkout takes again); one that ended before it would let the gate answer
 * OUT_OF_STOCK to a retry of a checkout that went through, so clocks that disagree must err this way.
 */
const ANSWERED_MARGIN_MS = 10 * 60_000;

/** A checkout with an answer to replay: its Idempotency-Key and until when its key keeps the answer. */
export interface AnsweredCheckout {
  key: string;
  expiresAt: Date;
}

/** Checkouts whose answer could not be marked (Redis away): those answered since `since`; `failures` of them. */
export interface Unmarked {
  since: Date;
  failures: number;
}

/** How an unknown take (sent, no reply in time) was settled before the checkout answered 503. */
export type UnknownTakeResolution = 'returned' | 'nothing-held' | 'unresolved';

/**
 * The flash-sale gate as this service uses it: one Redis connection that fails fast when Redis is down (the
 * checkout falls back to the database path, counted and logged) and waits GATE_REPLY_TIMEOUT_MS for a reply
 * once a command was sent (a take without a reply is unknown: see PlaceOrderHandler).
 */
@Injectable()
export class OrderStockGate implements OnModuleInit, OnApplicationShutdown {
  readonly gate: StockGate;
  private readonly answerKeptMs: number;
  /** Checkouts answered since this time could not be marked at the gate (Redis away). */
  private unmarked: Unmarked | undefined;

  constructor(
    @Inject(SERVICE_CONFIG) config: OrderConfig,
    private readonly metrics: GateMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('StockGate');
    this.answerKeptMs = config.IDEMPOTENCY_KEY_TTL_HOURS * 3_600_000 + ANSWERED_MARGIN_MS;
    this.gate = StockGate.connect(config.REDIS_URL, {
      ...redisAuthOf(config),
      commandTimeout: config.GATE_REPLY_TIMEOUT_MS,
    });
  }

  async onModuleInit(): Promise<void> {
    if (!(await this.gate.ready(3_000)))
      this.logger.warn('stock gate Redis not reachable at boot: checkouts use the database path until it is');
  }

  /** Counts and logs a GateUnavailable result. */
  reportUnavailable(operation: string, result: GateUnavailable, context: Record<string, unknown> = {}): void {
    this.metrics.unavailable.inc({ operation });
    this.logger.warn(
      { operation, reason: result.reason, ...context },
      'stock gate unavailable: falling back to the database path',
    );
  }

  /** Compensation of the checkout's take: returns the hold's units; Redis down is reported, not thrown. */
  async giveBack(tenantId: string, holdId: string | null, why: string): Promise<void> {
    if (!holdId) return;
    const r = await this.gate.giveBack(tenantId, holdId);
    if (r.outcome === 'GateUnavailable') this.reportUnavailable('give-back', r, { tenantId, holdId, why });
  }

  /**
   * Settles a take whose reply never came: gives the hold back, which Redis runs after the take on the same
   * connection, so a take that did happen is undone. The caller must hold the checkout's Idempotency-Key, so
   * that no request with the same key is building an order on that hold meanwhile.
   */
  async settleUnknownTake(tenantId: string, holdId: string, reason: string): Promise<UnknownTakeResolution> {
    const r = await this.gate.giveBack(tenantId, holdId);
    const resolution: UnknownTakeResolution =
      r.outcome === 'Returned' ? 'returned' : r.outcome === 'NothingHeld' ? 'nothing-held' : 'unresolved';
    this.metrics.unknown.inc({ resolution });
    this.logger.warn(
      { tenantId, holdId, reason, resolution },
      resolution === 'unresolved'
        ? 'stock gate take got no reply and its hold could not be given back: a retry with the same key uses it, else the re-sync restores the counter'
        : 'stock gate take got no reply: hold settled, checkout answered 503',
    );
    return resolution;
  }

  /**
   * Tells the gate that the checkout with this Idempotency-Key has its answer, so that a retry is replayed instead
   * of taking a unit or reading OUT_OF_STOCK. Redis away is reported and remembered; the re-arm job marks the
   * checkouts answered since then once it is back (`unmarkedCheckouts`).
   */
  async markAnswered(tenantId: string, idempotencyKey: string): Promise<void> {
    const holdId = gateHoldId(idempotencyKey);
    const r = await this.gate.markAnswered(tenantId, [{ holdId, untilMs: Date.now() + this.answerKeptMs }]);
    if (r.outcome !== 'GateUnavailable') return;
    this.reportUnavailable('mark-answered', r, { tenantId, holdId });
    if (this.unmarked) this.unmarked.failures += 1;
    // The key was completed a moment ago, by the database's clock; the margin covers clocks that disagree.
    else this.unmarked = { since: new Date(Date.now() - ANSWERED_MARGIN_MS), failures: 1 };
  }

  /** Marks answered checkouts read from the database (see MarkAnsweredCheckoutsHandler). */
  async markAnsweredCheckouts(
    tenantId: string,
    answered: AnsweredCheckout[],
  ): Promise<{ outcome: 'Marked' } | GateUnavailable> {
    return this.gate.markAnswered(
      tenantId,
      answered.map((c) => ({
        holdId: gateHoldId(c.key),
        untilMs: c.expiresAt.getTime() + ANSWERED_MARGIN_MS,
      })),
    );
  }

  /** The checkouts this process could not mark since Redis went away, if any. */
  unmarkedCheckouts(): Unmarked | undefined {
    return this.unmarked && { ...this.unmarked };
  }

  /** Forgets the failed marks once those answered since `done.since` are marked, unless more failed meanwhile. */
  forgetUnmarked(done: Unmarked): void {
    if (this.unmarked?.since === done.since && this.unmarked.failures === done.failures)
      this.unmarked = undefined;
  }

  /** The order was paid: the hold's units are sold for good. */
  async settle(tenantId: string, holdId: string | null): Promise<void> {
    if (!holdId) return;
    const r = await this.gate.settle(tenantId, holdId);
    if (r.outcome === 'GateUnavailable') this.reportUnavailable('settle', r, { tenantId, holdId });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gate.close();
  }
}
