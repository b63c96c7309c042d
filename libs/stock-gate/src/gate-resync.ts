import Redis from 'ioredis';
import { GateUnavailable, StockGate, isGateUnavailable } from './stock-gate';

/** The database's sellable units of some SKUs of one tenant (a SKU it does not stock is simply absent). */
export type AvailableSource = (tenantId: string, skus: string[]) => Promise<Map<string, number>>;

/** One counter the re-sync changed. */
export interface GateCorrection {
  tenantId: string;
  sku: string;
  /** The gate's counter before. */
  before: number;
  /** The database's figure it was set to. */
  after: number;
}

/** What one re-sync run did. */
export interface GateResyncReport {
  outcome: 'Resynced';
  /** Gated SKUs looked at (every tenant). */
  skus: number;
  corrections: GateCorrection[];
}

/** Settings of resyncGates. */
export interface ResyncGatesOptions {
  /** The gate, built on `redis` (new StockGate(redis)). */
  gate: StockGate;
  /** The connection the gate uses, for the SCAN of its counters. */
  redis: Redis;
  tenantIds: string[];
  availableOf: AvailableSource;
  /** SKUs read from the database and written to Redis per round (default 200). */
  pageSize?: number;
}

/**
 * The gate re-sync of issue 3 item 5 ("the database always wins"): every gated SKU of every tenant (every
 * counter key the gate has; a SKU whose gate is off has none and stays off) is set to the database's
 * available units; a gated SKU the database does not stock is set to 0. Returns GateUnavailable at the first
 * Redis call that cannot be made: the caller logs it and skips the run.
 *
 * Why it cannot oversell, tokens in flight included: the gate only decides who may *ask* the database; the
 * database's conditional UPDATE decides who gets stock. A token granted by the gate for an order that the
 * database has not reserved yet (order.created still on its way) is still counted in the database's
 * available units, so the re-sync gives it back to the counter: for a moment the gate lets through up to
 * that many extra checkouts, which the database then rejects (and their give-back may inflate the counter
 * until the next run), costing rejections, never oversell. The other way round (a reservation released in
 * the database whose token was never returned), the re-sync is what heals the counter. The database
 * figure is read before the counter is overwritten, so takes in between are overwritten too: the same
 * bounded, self-correcting leak.
 */
export async function resyncGates(options: ResyncGatesOptions): Promise<GateResyncReport | GateUnavailable> {
  const { gate, redis, tenantIds, availableOf, pageSize = 200 } = options;
  if (redis.status !== 'ready')
    return { outcome: 'GateUnavailable', reason: `redis connection is ${redis.status}` };
  const corrections: GateCorrection[] = [];
  let seen = 0;
  for (const tenantId of tenantIds) {
    const skus = await gatedSkus(gate, redis, tenantId);
    if (isGateUnavailable(skus)) return skus;
    for (let i = 0; i < skus.length; i += pageSize) {
      const page = skus.slice(i, i + pageSize);
      const available = await availableOf(tenantId, page);
      for (const sku of page) {
        const after = available.get(sku) ?? 0;
        const r = await gate.resync(tenantId, sku, after);
        if (isGateUnavailable(r)) return r;
        if (r.outcome === 'NotGated') continue; // turned off meanwhile: off stays off
        seen += 1;
        if (r.before !== after) corrections.push({ tenantId, sku, before: r.before, after });
      }
    }
  }
  return { outcome: 'Resynced', skus: seen, corrections };
}

/** The SKUs of one tenant whose gate is on: the counter keys the gate has, found with SCAN (never KEYS). */
export async function gatedSkus(
  gate: StockGate,
  redis: Redis,
  tenantId: string,
): Promise<string[] | GateUnavailable> {
  const prefix = gate.counterKey(tenantId, '');
  const skus = new Set<string>();
  let cursor = '0';
  try {
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 500);
      for (const key of keys) skus.add(key.slice(prefix.length));
      cursor = next;
    } while (cursor !== '0');
  } catch (error) {
    return { outcome: 'GateUnavailable', reason: (error as Error).message ?? String(error) };
  }
  return [...skus].sort();
}

/** A key prefix as a literal SCAN pattern (the tenant's hash tag braces are not glob, but [ ] * ? \ are). */
const escapeGlob = (s: string): string => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
