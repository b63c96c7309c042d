import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import {
  DB_SERVICES,
  OUTBOX_SERVICES,
  SERVICES,
  StackConfig,
  ownedPid,
  stackKafka,
  stopServiceProcess,
  waitFor,
} from '@checkout/local-stack';
import { ServiceName, metricValue } from '@checkout/e2e';
import { ChaosContext } from '../context';
import { ChaosPart, restart } from '../faults';
import { CaseResult, judge } from '../verdict';
import { Workload } from '../workload';
import { Scenario } from './scenario';

/** RSS may grow this much from the warmed-up sample to the end of the soak (issue 18 scenario 6). */
export const MAX_RSS_GROWTH = 0.2;

/** How long a row may live: retention + one pruning interval (the services' settings, defaults of the kit). */
interface RetentionBounds {
  outboxMs: number;
  inboxMs: number;
  idempotencyMs: number;
}

/** The defaults of libs/service-kit and the order config (the local stack sets none of them). */
const DEFAULT_BOUNDS: RetentionBounds = {
  /** Outbox rows: 24 h after the relay confirmed them, pruned every 60 s. */
  outboxMs: 24 * 3_600_000 + 60_000,
  /** Inbox rows: 8 days (longer than the topics keep messages), pruned every 60 s. */
  inboxMs: 8 * 24 * 3_600_000 + 60_000,
  /**
   * Idempotency keys: each expires at its own `expires_at` (the TTL when it was stored) and is deleted by the
   * next cleanup, every 10 min: no key stays more than that past its expiry.
   */
  idempotencyMs: 600_000,
};

/** Services with an outbox (and order's idempotency keys): the ones the short-retention profile restarts. */
const RETENTION_SERVICES = OUTBOX_SERVICES.map((s) => s.name);

/** The workload retries a checkout with its key for up to 180 s: a key must be remembered longer than that. */
const MIN_IDEMPOTENCY_TTL_MS = 240_000;

/** The short-retention profile: outbox rows kept `ms`, idempotency keys at least 240 s, both pruned every 10 s. */
export function shortRetentionEnv(ms: number): Record<string, string> {
  return {
    OUTBOX_RETENTION_MS: String(ms),
    MESSAGING_RETENTION_INTERVAL_MS: '10000',
    // Never shorter than a client's retry window: a retry with a forgotten key is a new order (seen at 45 s).
    IDEMPOTENCY_KEY_TTL_HOURS: String(Math.max(ms, MIN_IDEMPOTENCY_TTL_MS) / 3_600_000),
    IDEMPOTENCY_CLEANUP_INTERVAL_MS: '10000',
  };
}

/**
 * Restarts the outbox services with `env` added to their environment (startServices passes the runner's own
 * environment through), or, with `env` undefined, with the stack's settings again.
 */
async function restartWith(ctx: ChaosContext, env: Record<string, string> | undefined): Promise<void> {
  for (const key of Object.keys(shortRetentionEnv(1))) delete process.env[key];
  Object.assign(process.env, env ?? {});
  await Promise.all(RETENTION_SERVICES.map((name) => stopServiceProcess(ctx.config, name)));
  for (const name of RETENTION_SERVICES) await restart(ctx.config, name as ChaosPart, ctx.log);
}
/** Slack on top of a designed bound: one pass of a busy machine. */
const SLACK_MS = 120_000;

/** The resident set of a process in bytes (from /proc), or undefined when it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The median of a list of numbers. */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Growth of each app's RSS from the warmed-up samples (the second fifth of the run) to the last fifth. */
export function rssGrowth(samples: Record<string, number[]>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(samples)
      .filter(([, xs]) => xs.length >= 5)
      .map(([app, xs]) => {
        const fifth = Math.max(1, Math.floor(xs.length / 5));
        const warm = median(xs.slice(fifth, 2 * fifth));
        const end = median(xs.slice(-fifth));
        return [app, end / warm - 1];
      }),
  );
}

/** The total lag of the services' consumer groups on the saga topics (committed offset to end of partition). */
async function consumerLag(config: StackConfig): Promise<Record<string, number>> {
  const admin = stackKafka(config, 'chaos-lag').admin();
  await admin.connect();
  try {
    const { groups } = await admin.listGroups();
    const ours = groups
      .map((g) => g.groupId)
      .filter((id) => DB_SERVICES.some((s) => id === s.name || id.startsWith(`${s.name}-`)));
    const out: Record<string, number> = {};
    for (const groupId of ours) {
      let lag = 0;
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
        const ends = new Map(
          (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]),
        );
        for (const p of partitions)
          if (Number(p.offset) >= 0) lag += Math.max(0, (ends.get(p.partition) ?? 0) - Number(p.offset));
      }
      out[groupId] = lag;
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

/** One table's size and oldest row against its designed retention. */
export interface TableAge {
  rows: number;
  oldestMs: number;
  boundMs: number;
}

/** Rows and the age of the oldest row of the tables retention keeps small, per database. */
async function tableAges(config: StackConfig, bounds: RetentionBounds): Promise<Record<string, TableAge>> {
  const tables: { db: string; table: string; column: string; bound: number }[] = [
    ...OUTBOX_SERVICES.map((s) => ({
      db: s.database!,
      table: 'outbox',
      column: 'occurred_at',
      bound: bounds.outboxMs,
    })),
    ...DB_SERVICES.map((s) => ({
      db: s.database,
      table: 'inbox',
      column: 'processed_at',
      bound: bounds.inboxMs,
    })),
    // For a key, the age that counts is the time since it expired (its TTL was fixed when it was stored).
    { db: 'order_svc', table: 'idempotency_keys', column: 'expires_at', bound: bounds.idempotencyMs },
  ];
  const out: Record<string, TableAge> = {};
  for (const t of tables) {
    const client = new Client({
      host: '127.0.0.1',
      port: config.pg.port,
      user: t.db,
      password: config.devDbPassword,
      database: t.db,
    });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT count(*)::int AS rows,
                GREATEST(0, COALESCE(EXTRACT(EPOCH FROM now() - min(${t.column})) * 1000, 0))::bigint AS oldest
           FROM ${t.table}`,
      );
      out[`${t.db}.${t.table}`] = { rows: rows[0].rows, oldestMs: Number(rows[0].oldest), boundMs: t.bound };
    } finally {
      await client.end();
    }
  }
  return out;
}

/** The apps whose RSS the soak follows. */
const APPS = SERVICES.map((s) => s.name);

/**
 * Issue 18 scenario 6: checkouts at a steady rate for `--soak <seconds>` (default 600), no fault. Every app's RSS is
 * sampled every 10 s and may not grow more than 20% from the warmed-up samples to the end; afterwards every
 * consumer group's lag comes back to 0, no row of the outbox, inbox or idempotency tables outlives its designed
 * retention, and the usual invariants hold.
 */
export const soak: Scenario = {
  name: 'soak',
  summary:
    'steady checkouts for --soak <seconds>: RSS growth <= 20%, retention holds, consumer lag back to 0',
  async run(ctx: ChaosContext): Promise<CaseResult[]> {
    const { soakMs, soakRate, soakRetentionMs } = ctx.options;
    const orders = Math.max(1, Math.round((soakMs / 1000) * soakRate));
    const bounds: RetentionBounds =
      soakRetentionMs > 0
        ? { ...DEFAULT_BOUNDS, outboxMs: soakRetentionMs + 10_000, idempotencyMs: 10_000 }
        : DEFAULT_BOUNDS;
    try {
      if (soakRetentionMs > 0) {
        ctx.log(
          `soak: restarting ${RETENTION_SERVICES.join(', ')} with outbox and idempotency retention ${soakRetentionMs} ms`,
        );
        await restartWith(ctx, shortRetentionEnv(soakRetentionMs));
      }
      return await soakRun(ctx, orders, bounds);
    } finally {
      // Also when the first restart failed: no service may keep running with the soak's retention.
      if (soakRetentionMs > 0) {
        ctx.log(`soak: restarting ${RETENTION_SERVICES.join(', ')} with the stack's settings`);
        await restartWith(ctx, undefined);
      }
    }
  },
};

/** The soak itself, with the services already running under the retention it checks. */
async function soakRun(ctx: ChaosContext, orders: number, bounds: RetentionBounds): Promise<CaseResult[]> {
  const { soakMs, soakRate, soakRetentionMs } = ctx.options;
  const workload = new Workload(ctx.events, { orders, rate: soakRate });
  await workload.prepare();
  ctx.log(`soak: ${orders} checkouts at ${soakRate}/s for ${(soakMs / 60_000).toFixed(1)} min`);
  const before = await tableAges(ctx.config, bounds);
  const prunedBefore = await prunedRows();
  const samples: Record<string, number[]> = Object.fromEntries(APPS.map((a) => [a, []]));
  const sample = () => {
    for (const app of APPS) {
      const pid = ownedPid(ctx.config.run, app);
      const rss = pid === undefined ? undefined : rssBytes(pid);
      if (rss !== undefined) samples[app].push(rss);
    }
  };
  sample();
  const timer = setInterval(sample, 10_000);
  try {
    await workload.run();
  } finally {
    clearInterval(timer);
  }
  sample();
  const result = await judge(ctx, 'soak', `${(soakMs / 60_000).toFixed(1)} min`, 'none', workload, {
    faultAt: null,
    backAt: null,
  });
  let lag: Record<string, number> = {};
  let lagZero = true;
  try {
    await waitFor(
      'every consumer group at the end of its topics',
      async () => {
        lag = await consumerLag(ctx.config);
        return Object.values(lag).every((n) => n === 0);
      },
      { timeoutMs: 120_000, intervalMs: 2_000 },
    );
  } catch {
    lagZero = false;
  }
  const after = await tableAges(ctx.config, bounds);
  const prunedAfter = await prunedRows();
  const growth = rssGrowth(samples);
  const problems: string[] = [];
  for (const [app, g] of Object.entries(growth))
    if (g > MAX_RSS_GROWTH) problems.push(`${app} RSS grew ${(g * 100).toFixed(1)}% (limit 20%)`);
  if (!lagZero)
    problems.push(
      `consumer lag did not come back to 0: ${JSON.stringify(Object.entries(lag).filter(([, n]) => n))}`,
    );
  for (const [table, t] of Object.entries(after))
    if (t.oldestMs > t.boundMs + SLACK_MS)
      problems.push(
        `${table}: oldest row is ${Math.round(t.oldestMs / 1000)} s old, retention keeps ${Math.round(t.boundMs / 1000)} s`,
      );
  // With a retention shorter than the soak, every outbox service must actually have pruned rows meanwhile.
  if (soakRetentionMs > 0 && soakMs > soakRetentionMs + 30_000)
    for (const name of RETENTION_SERVICES)
      if ((prunedAfter[name] ?? 0) <= (prunedBefore[name] ?? 0))
        problems.push(`${name} pruned no outbox row during the soak (retention ${soakRetentionMs} ms)`);
  const mb = (x: number | undefined) => (x === undefined ? null : Math.round(x / 1048576));
  const perApp = (at: (xs: number[]) => number | undefined) =>
    Object.fromEntries(Object.entries(samples).map(([a, xs]) => [a, mb(at(xs))]));
  return [
    {
      ...result,
      ok: result.ok && problems.length === 0,
      problems: [...result.problems, ...problems],
      extra: {
        rssGrowthPct: Object.fromEntries(
          Object.entries(growth).map(([a, g]) => [a, Math.round(g * 1000) / 10]),
        ),
        rssStartMb: perApp((xs) => xs[0]),
        rssEndMb: perApp((xs) => xs[xs.length - 1]),
        rssSamples: samples,
        consumerLag: lag,
        tablesBefore: before,
        tablesAfter: after,
        outboxRowsPruned: Object.fromEntries(
          RETENTION_SERVICES.map((n) => [n, (prunedAfter[n] ?? 0) - (prunedBefore[n] ?? 0)]),
        ),
      },
    },
  ];
}

/** Outbox rows each outbox service's retention deleted so far (its `messaging_rows_pruned_total`). */
async function prunedRows(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of RETENTION_SERVICES) {
    try {
      out[name] = await metricValue(name as ServiceName, 'messaging_rows_pruned_total', { table: 'outbox' });
    } catch {
      out[name] = 0; // no sample yet: nothing pruned since the start
    }
  }
  return out;
}
