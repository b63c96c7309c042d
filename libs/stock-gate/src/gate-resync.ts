import Redis from 'ioredis';
import { GateUnavailable, StockGate } from './stock-gate';

/**
 * KEYS[1] = counter; ARGV[1] = the database's units, ARGV[2] = the counter as the previous run left it ('' if
 * unknown). Lowers the counter to the database figure at once; raises it only if the counter has not moved
 * since the previous run (no take, no give-back: no token can be in flight). A gate that is off stays off.
 * Replies false (off) or {before, '1' set | '0' left}.
 */
const RESYNC_IF_QUIET_LUA = `
local v = redis.call('GET', KEYS[1])
if not v then return false end
if tonumber(v) > tonumber(ARGV[1]) or (v == ARGV[2] and v ~= ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return {v, '1'}
end
return {v, '0'}
`;

interface ResyncCommands {
  stockGateResyncIfQuiet(key: string, dbUnits: number, lastSeen: string): Promise<[string, '0' | '1'] | null>;
}

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
  /** Counters below the database that moved since the previous run: raised by a later, quiet run. */
  deferred: GateCorrection[];
}

/** Settings of resyncGates. */
export interface ResyncGatesOptions {
  /** The gate, built on `redis` (new StockGate(redis)). */
  gate: StockGate;
  /** The connection the gate uses, for the SCAN of its counters. */
  redis: Redis;
  tenantIds: string[];
  availableOf: AvailableSource;
  /**
   * Each counter as the previous run left it, keyed by counter key; updated by this run. Keep one map for
   * the life of the job: without it a counter below the database figure is never raised.
   */
  lastSeen: Map<string, string>;
  /** SKUs read from the database and written to Redis per round (default 200). */
  pageSize?: number;
}

/**
 * The gate re-sync of issue 3 item 5 ("the database always wins"): every gated SKU of every tenant (every
 * counter key the gate has; a SKU whose gate is off has none and stays off) is brought to the database's
 * sellable units; a gated SKU the database does not stock goes to 0. Returns GateUnavailable at the first
 * Redis call that cannot be made: the caller logs it and skips the run.
 *
 * Tokens in flight: a token the gate granted for an order the database has not reserved yet (order.created
 * still on its way) is still counted in the database's available units. Copying the database figure over
 * the counter would hand that token out a second time. That cannot oversell: the gate only decides who may
 * ask, the database's conditional UPDATE decides who gets stock, and the extra checkout is rejected there.
 * But it would accept checkouts that are then rejected, so the re-sync only lowers a counter at once (a
 * counter above the database is wrong whatever is in flight: lowering it to the database figure still
 * leaves at least the true remainder) and raises one only when it has not moved since the previous run:
 * no take or give-back for a whole interval means no token is in flight, and what is missing is a leak
 * (a unit never given back), which the database figure heals.
 */
export async function resyncGates(options: ResyncGatesOptions): Promise<GateResyncReport | GateUnavailable> {
  const { gate, redis, tenantIds, availableOf, pageSize = 200 } = options;
  if (redis.status !== 'ready')
    return { outcome: 'GateUnavailable', reason: `redis connection is ${redis.status}` };
  const { lastSeen } = options;
  const commands = redis as Redis & ResyncCommands;
  if (!('stockGateResyncIfQuiet' in redis))
    redis.defineCommand('stockGateResyncIfQuiet', { lua: RESYNC_IF_QUIET_LUA, numberOfKeys: 1 });
  const corrections: GateCorrection[] = [];
  const deferred: GateCorrection[] = [];
  let seen = 0;
  for (const tenantId of tenantIds) {
    const skus = await gatedSkus(gate, redis, tenantId);
    if (!Array.isArray(skus)) return skus;
    for (let i = 0; i < skus.length; i += pageSize) {
      const page = skus.slice(i, i + pageSize);
      const available = await availableOf(tenantId, page);
      for (const sku of page) {
        const key = gate.counterKey(tenantId, sku);
        const after = Math.max(0, Math.trunc(available.get(sku) ?? 0));
        let reply: [string, '0' | '1'] | null;
        try {
          reply = await commands.stockGateResyncIfQuiet(key, after, lastSeen.get(key) ?? '');
        } catch (error) {
          return { outcome: 'GateUnavailable', reason: (error as Error).message ?? String(error) };
        }
        if (reply === null) {
          lastSeen.delete(key); // turned off meanwhile: off stays off
          continue;
        }
        seen += 1;
        const [before, set] = reply;
        const correction = { tenantId, sku, before: Number(before), after };
        if (set === '1') corrections.push(correction);
        else if (correction.before !== after) deferred.push(correction);
        lastSeen.set(key, set === '1' ? String(after) : before);
      }
    }
  }
  return { outcome: 'Resynced', skus: seen, corrections, deferred };
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
