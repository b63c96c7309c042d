import Redis, { RedisOptions, ReplyError } from 'ioredis';
import { GIVE_BACK_LUA, MARK_ANSWERED_LUA, RESYNC_LUA, TAKE_LUA } from './gate.scripts';

/** One line a checkout wants to take through the gate. */
export interface GateLine {
  sku: string;
  quantity: number;
}

/**
 * Redis could not be asked (not connected, connection refused, or it refused the command while loading or
 * busy): the command did not run, so nothing was taken. The caller falls back to the database path.
 */
export interface GateUnavailable {
  outcome: 'GateUnavailable';
  reason: string;
}

/**
 * A take was sent but no reply came within the reply timeout (a slow Redis or event loop, a connection lost
 * mid-flight): like a PSP timeout, it may or may not have taken units. It is neither a yes nor a no, and not
 * "Redis down": the caller must not take the database path while possibly holding units too.
 */
export interface GateUnknown {
  outcome: 'GateUnknown';
  reason: string;
}

/** What the gate said to a take. */
export type TakeResult =
  /** Units taken for every gated line, recorded under the hold id; give them back if the order fails. */
  | { outcome: 'Granted'; gatedSkus: string[] }
  /** This hold id already holds units (a retry of the same checkout): nothing taken again. */
  | { outcome: 'AlreadyHeld' }
  /** This hold id's checkout was answered (`markAnswered`): nothing taken; the caller replays the answer. */
  | { outcome: 'Answered' }
  /** No line's SKU has the gate on: go straight to the database path. */
  | { outcome: 'NotGated' }
  /** A gated SKU has fewer units left than asked: answer out of stock without touching the database. */
  | { outcome: 'Insufficient'; sku: string; remaining: number }
  | GateUnavailable
  | GateUnknown;

/** A checkout that has an answer to replay, and until when (ms since the epoch) the gate should know it. */
export interface AnsweredHold {
  holdId: string;
  untilMs: number;
}

/** Options of a take. */
export interface TakeOptions {
  /** Take even if the hold id is marked answered (its answer turned out to be gone). */
  ignoreAnswered?: boolean;
  /** The clock the answered marks are compared with (tests). */
  now?: number;
}

/** What a give-back did. */
export type GiveBackResult = { outcome: 'Returned' } | { outcome: 'NothingHeld' } | GateUnavailable;

interface GateCommands {
  stockGateTake(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
  stockGateGiveBack(numKeys: number, ...args: (string | number)[]): Promise<number>;
  stockGateMarkAnswered(key: string, ...args: (string | number)[]): Promise<number>;
  stockGateResync(key: string, available: number): Promise<string | null>;
}

/** How long a sent command waits for its reply by default: long enough for a loaded machine's event loop. */
export const GATE_REPLY_TIMEOUT_MS = 5_000;

/**
 * Connection settings that fail fast on a Redis that is down (no offline queue, no retries: a command is
 * refused at once while the connection is not up) but wait patiently for the reply of a command that was
 * sent, because a slow reply is not a "no" and its outcome is unknown once given up on.
 */
export const FAIL_FAST_REDIS: RedisOptions = {
  // The commands issued in one turn of the event loop (a flash sale's concurrent checkouts) go out in one write
  // and come back in one read: Redis runs them in order, one after the other, as it would separately.
  enableAutoPipelining: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: GATE_REPLY_TIMEOUT_MS,
  connectTimeout: 1_000,
  retryStrategy: (times) => Math.min(times * 200, 2_000),
};

/** Marks sent per script call (a Lua call's arguments are bounded). */
const MARK_BATCH = 500;

/** The error ioredis rejects a command with when it did not write it (not connected, no offline queue). */
const NOT_SENT = /Stream isn't writeable|enableOfflineQueue/;

/**
 * The hot-SKU gate (seed "Hot SKU"): a Redis counter per (tenant, sku) that a checkout decrements before it
 * may reach the database, so the database only sees the requests that can still buy. The database remains
 * the source of truth: units go back when it rejects, an order is cancelled or a reservation expires, and
 * `resync` overwrites the counter with the database's figure.
 */
export class StockGate {
  private readonly redis: Redis & GateCommands;

  constructor(
    redis: Redis,
    private readonly prefix = 'stock-gate',
  ) {
    redis.defineCommand('stockGateTake', { lua: TAKE_LUA });
    redis.defineCommand('stockGateGiveBack', { lua: GIVE_BACK_LUA });
    redis.defineCommand('stockGateMarkAnswered', { lua: MARK_ANSWERED_LUA, numberOfKeys: 1 });
    redis.defineCommand('stockGateResync', { lua: RESYNC_LUA, numberOfKeys: 1 });
    this.redis = redis as Redis & GateCommands;
  }

  /** A gate on its own fail-fast connection; errors are reported by the results, never thrown on connect. */
  static connect(url: string, options: RedisOptions = {}): StockGate {
    const redis = new Redis(url, { ...FAIL_FAST_REDIS, ...options });
    redis.on('error', () => undefined); // reported per call as GateUnavailable
    return new StockGate(redis);
  }

  /** Waits until the connection is up (true) or the timeout passes (false); never throws. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      this.redis.on('ready', onReady);
    });
  }

  /** The Redis key of a SKU's counter. */
  counterKey(tenantId: string, sku: string): string {
    return `${this.prefix}:{${tenantId}}:sku:${sku}`;
  }

  private holdsKey(tenantId: string): string {
    return `${this.prefix}:{${tenantId}}:holds`;
  }

  /** The sorted set of a tenant's answered hold ids, scored by until when they are remembered. */
  private answeredKey(tenantId: string): string {
    return `${this.prefix}:{${tenantId}}:answered`;
  }

  /**
   * Takes every line's quantity from its counter, all or nothing, and records the take under holdId. A hold id
   * marked answered takes nothing (`Answered`), unless `ignoreAnswered`.
   */
  async take(
    tenantId: string,
    holdId: string,
    lines: GateLine[],
    { ignoreAnswered = false, now = Date.now() }: TakeOptions = {},
  ): Promise<TakeResult> {
    const keys = [
      this.holdsKey(tenantId),
      this.answeredKey(tenantId),
      ...lines.map((l) => this.counterKey(tenantId, l.sku)),
    ];
    const args = [
      holdId,
      ignoreAnswered ? '' : now,
      ...lines.map((l) => l.quantity),
      ...lines.map((l) => l.sku),
    ];
    const reply = await this.send(() => this.redis.stockGateTake(keys.length, ...keys, ...args));
    if (!Array.isArray(reply)) return reply;
    switch (reply[0]) {
      case 'granted':
        return { outcome: 'Granted', gatedSkus: reply.slice(1) };
      case 'already-held':
        return { outcome: 'AlreadyHeld' };
      case 'answered':
        return { outcome: 'Answered' };
      case 'not-gated':
        return { outcome: 'NotGated' };
      case 'insufficient':
        return { outcome: 'Insufficient', sku: reply[1], remaining: Number(reply[2]) };
      default:
        throw new Error(`unexpected stock gate reply ${JSON.stringify(reply)}`);
    }
  }

  /** Compensation of take: returns the units of holdId to their counters, once; nothing held is a no-op. */
  async giveBack(tenantId: string, holdId: string): Promise<GiveBackResult> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const hold = await this.call(() => this.redis.hget(this.holdsKey(tenantId), holdId));
      if (typeof hold === 'object' && hold !== null) return hold;
      if (hold === null) return { outcome: 'NothingHeld' };
      const skus = (JSON.parse(hold) as [string, number][]).map(([sku]) => sku);
      const keys = [this.holdsKey(tenantId), ...skus.map((sku) => this.counterKey(tenantId, sku))];
      const done = await this.call(() => this.redis.stockGateGiveBack(keys.length, ...keys, holdId, hold));
      if (typeof done === 'object') return done;
      if (done === 1) return { outcome: 'Returned' };
      if (done === 0) return { outcome: 'NothingHeld' };
    }
    throw new Error(`stock gate hold ${holdId} kept changing while it was given back`);
  }

  /**
   * Remembers that these hold ids' checkouts have an answer to replay, each until its `untilMs`, so that a take
   * for one of them is `Answered` instead of taking units or reading `Insufficient`: the gate can refuse a
   * sold-out SKU without asking the database whether the request is a retry. Marks past their time are
   * dropped in the same call. Safe to repeat (a later time wins).
   */
  async markAnswered(
    tenantId: string,
    holds: AnsweredHold[],
    now = Date.now(),
  ): Promise<{ outcome: 'Marked' } | GateUnavailable> {
    for (let i = 0; i < holds.length; i += MARK_BATCH) {
      const args = holds.slice(i, i + MARK_BATCH).flatMap((h) => [Math.trunc(h.untilMs), h.holdId]);
      const r = await this.call(() =>
        this.redis.stockGateMarkAnswered(this.answeredKey(tenantId), now, ...args),
      );
      if (typeof r === 'object') return r;
    }
    return { outcome: 'Marked' };
  }

  /** The order went through (paid): forget the hold without returning its units. */
  async settle(tenantId: string, holdId: string): Promise<{ outcome: 'Settled' } | GateUnavailable> {
    const r = await this.call(() => this.redis.hdel(this.holdsKey(tenantId), holdId));
    return typeof r === 'number' ? { outcome: 'Settled' } : r;
  }

  /** Turns the gate on for a SKU with the given units (primed from the database's available stock). */
  async enable(
    tenantId: string,
    sku: string,
    available: number,
  ): Promise<{ outcome: 'Enabled' } | GateUnavailable> {
    const r = await this.call(() =>
      this.redis.set(this.counterKey(tenantId, sku), Math.max(0, Math.trunc(available))),
    );
    return typeof r === 'string' ? { outcome: 'Enabled' } : r;
  }

  /**
   * Turns the gate back on for a SKU whose counter is gone (Redis restarted or lost its keys) with an estimate of
   * the units left. A counter that exists is left alone (another instance re-armed it, or it was never lost).
   */
  async rearm(
    tenantId: string,
    sku: string,
    units: number,
  ): Promise<{ outcome: 'Rearmed' } | { outcome: 'AlreadyOn' } | GateUnavailable> {
    const r = await this.call(() =>
      this.redis.set(this.counterKey(tenantId, sku), Math.max(0, Math.trunc(units)), 'NX'),
    );
    if (r === null) return { outcome: 'AlreadyOn' };
    return typeof r === 'string' ? { outcome: 'Rearmed' } : r;
  }

  /** Calls `listener` each time the connection becomes ready again after it was lost (not on the first connect). */
  onReconnect(listener: () => void): void {
    let connectedOnce = this.redis.status === 'ready';
    this.redis.on('ready', () => {
      if (connectedOnce) listener();
      connectedOnce = true;
    });
  }

  /** Turns the gate off: checkouts of the SKU go to the database path again. */
  async disable(tenantId: string, sku: string): Promise<{ outcome: 'Disabled' } | GateUnavailable> {
    const r = await this.call(() => this.redis.del(this.counterKey(tenantId, sku)));
    return typeof r === 'number' ? { outcome: 'Disabled' } : r;
  }

  /** Overwrites an enabled gate's counter with the database's figure (the database wins); off stays off. */
  async resync(
    tenantId: string,
    sku: string,
    dbAvailable: number,
  ): Promise<{ outcome: 'Resynced'; before: number } | { outcome: 'NotGated' } | GateUnavailable> {
    const r = await this.call(() =>
      this.redis.stockGateResync(this.counterKey(tenantId, sku), Math.max(0, Math.trunc(dbAvailable))),
    );
    if (r === null) return { outcome: 'NotGated' };
    return typeof r === 'string' ? { outcome: 'Resynced', before: Number(r) } : r;
  }

  /** Units left at the gate, or null when the gate is off for the SKU. */
  async remaining(tenantId: string, sku: string): Promise<number | null | GateUnavailable> {
    const r = await this.call(() => this.redis.get(this.counterKey(tenantId, sku)));
    if (r === null) return null;
    return typeof r === 'string' ? Number(r) : r;
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /**
   * Runs a Redis call whose outcome matters either way (take). GateUnavailable only when the command surely
   * did not run: the connection was not up (checked before sending, and ioredis refuses to queue), or Redis
   * refused it (loading, busy, read-only, authentication). Anything after it was written (no reply within the reply timeout,
   * connection lost mid-flight) is GateUnknown. A script error is a bug and is thrown.
   */
  private async send<T>(fn: () => Promise<T>): Promise<T | GateUnavailable | GateUnknown> {
    if (this.redis.status !== 'ready')
      return { outcome: 'GateUnavailable', reason: `redis connection is ${this.redis.status}` };
    try {
      return await fn();
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      if (error instanceof ReplyError) {
        // Refused before running: loading, busy, read-only, or not (or not allowed to be) authenticated.
        if (/^(LOADING|BUSY|READONLY|MASTERDOWN|CLUSTERDOWN|NOAUTH|WRONGPASS|NOPERM)/.test(message))
          return { outcome: 'GateUnavailable', reason: message };
        throw error;
      }
      if (NOT_SENT.test(message)) return { outcome: 'GateUnavailable', reason: message };
      return { outcome: 'GateUnknown', reason: message };
    }
  }

  /**
   * Runs a Redis call that is safe to repeat or only reads (give-back, settle, enable, resync...): an unknown
   * outcome is reported as GateUnavailable, and the caller's retry or the re-sync settles it.
   */
  private async call<T>(fn: () => Promise<T>): Promise<T | GateUnavailable> {
    const r = await this.send(fn);
    return isGateUnknown(r) ? { outcome: 'GateUnavailable', reason: `no reply: ${r.reason}` } : r;
  }
}

/** Whether a gate result says a sent take got no reply: it may or may not have taken units. */
export const isGateUnknown = (r: unknown): r is GateUnknown =>
  typeof r === 'object' && r !== null && (r as { outcome?: string }).outcome === 'GateUnknown';
