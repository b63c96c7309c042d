import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { loadStackConfig, pgDataDir, superClient } from '@checkout/local-stack';
import { CheckoutApi, uniqueSku } from '@checkout/e2e';
import { report } from '../report';

/**
 * Where a saga's CPU goes, to the PostgreSQL backend (issue 16 item 2, "profile first"): `--orders` checkouts at
 * `--rate`/s on the running stack, waited for until every order ended, then per saga: CPU ms of every stack
 * process (the Node services, Kafka, Connect, Redis) and of every PostgreSQL process by role (the backends of
 * each service's database, each connector's WAL sender, the writers), transactions and row writes per database,
 * statements and their execution ms per database (pg_stat_statements), WAL bytes; `--top N` lists the N
 * statements that cost most per saga. Counts are exact; CPU figures are as noisy as the machine.
 */
const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '300' },
    rate: { type: 'string', default: '10' },
    top: { type: 'string', default: '15' },
    out: { type: 'string', default: 'saga-breakdown' },
  },
});
const ORDERS = Number(args.orders);
const RATE = Number(args.rate);
const config = loadStackConfig();
const api = new CheckoutApi('acme');
const ORDER_URL = `http://127.0.0.1:${config.servicePorts.order}`;
const log = (line: string) => console.log(`[bench:breakdown] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits = 2) => +x.toFixed(digits);

/** CPU ms (user + system) of a process, or undefined once it is gone. */
function cpuMs(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}

const pids = () =>
  readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);

function parentOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The stack's own processes by name, found by their command lines. */
function stackProcesses(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pid of pids()) {
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const app = /apps\/([a-z-]+)\/dist\/src\/main\.js/.exec(cmd);
    if (app) out[app[1]] = pid;
    else if (cmd.includes('kafka.Kafka')) out.kafka = pid;
    else if (cmd.includes('ConnectDistributed')) out.connect = pid;
    else if (cmd.startsWith('redis-server') && cmd.includes(String(config.redis.port))) out.redis = pid;
  }
  return out;
}

interface Snapshot {
  processes: Record<string, { pid: number; ms: number }>;
  postmaster: number;
  /** PostgreSQL child processes: pid -> role and CPU ms. */
  pg: Map<number, { role: string; ms: number }>;
  databases: { datname: string; xacts: number; inserted: number; updated: number; deleted: number }[];
  statements: { datname: string; id: string; query: string; calls: number; ms: number }[];
  walBytes: number;
}

async function snapshot(pg: Client, postmaster: number): Promise<Snapshot> {
  const activity = (
    await pg.query<{ pid: number; backend_type: string; datname: string | null }>(
      `SELECT pid, backend_type, datname FROM pg_stat_activity`,
    )
  ).rows;
  const role = new Map(
    activity.map((a) => [
      a.pid,
      a.backend_type === 'client backend'
        ? `backend ${a.datname}`
        : a.backend_type === 'walsender'
          ? `walsender ${a.datname}`
          : a.backend_type,
    ]),
  );
  const pgProcesses = new Map<number, { role: string; ms: number }>();
  for (const pid of pids()) {
    if (parentOf(pid) !== postmaster) continue;
    const ms = cpuMs(pid);
    if (ms !== undefined) pgProcesses.set(pid, { role: role.get(pid) ?? 'other', ms });
  }
  const databases = (
    await pg.query(
      `SELECT datname, xact_commit::float8 AS xacts, tup_inserted::float8 AS inserted,
              tup_updated::float8 AS updated, tup_deleted::float8 AS deleted
         FROM pg_stat_database WHERE datname IS NOT NULL`,
    )
  ).rows;
  const statements = (
    await pg.query(
      `SELECT d.datname, s.queryid::text AS id, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 120) AS query,
              s.calls::float8 AS calls, s.total_exec_time AS ms
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid`,
    )
  ).rows;
  const lsn = (await pg.query<{ bytes: string }>(`SELECT pg_current_wal_lsn() - '0/0' AS bytes`)).rows[0];
  const processes: Snapshot['processes'] = {};
  for (const [name, pid] of Object.entries(stackProcesses())) {
    const ms = cpuMs(pid);
    if (ms !== undefined) processes[name] = { pid, ms };
  }
  return {
    processes,
    postmaster: cpuMs(postmaster) ?? 0,
    pg: pgProcesses,
    databases,
    statements,
    walBytes: Number(lsn.bytes),
  };
}

async function placeOrders(sku: string): Promise<string[]> {
  const ids: string[] = [];
  const failures = new Map<number, number>();
  await Promise.all(
    Array.from({ length: ORDERS }, async (_, i) => {
      await sleep((i * 1000) / RATE);
      const res = await fetch(`${ORDER_URL}/v1/checkout`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${api.key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({
          customerId: `breakdown-${i}`,
          currency: 'VND',
          lines: [{ sku, quantity: 1 }],
          payment: { token: 'tok_success' },
        }),
      });
      const body = (await res.json()) as { orderId?: string };
      if (res.status === 202 && body.orderId) ids.push(body.orderId);
      else failures.set(res.status, (failures.get(res.status) ?? 0) + 1);
    }),
  );
  if (failures.size) log(`checkouts not accepted: ${JSON.stringify(Object.fromEntries(failures))}`);
  return ids;
}

async function waitEnded(ids: string[]): Promise<void> {
  const orders = superClient(config, 'order_svc');
  await orders.connect();
  const deadline = Date.now() + 300_000;
  try {
    for (;;) {
      const { rows } = await orders.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM orders
          WHERE id = ANY($1) AND status IN ('SHIPPED', 'CANCELLED', 'REJECTED', 'REFUNDED', 'BACKORDERED')`,
        [ids],
      );
      if (rows[0].n >= ids.length) return;
      if (Date.now() > deadline) throw new Error(`${ids.length - rows[0].n} sagas did not end within 300 s`);
      await sleep(250);
    }
  } finally {
    await orders.end();
  }
}

async function main(): Promise<void> {
  const postmaster = Number(readFileSync(join(pgDataDir(config), 'postmaster.pid'), 'utf8').split('\n')[0]);
  const pg = superClient(config);
  await pg.connect();
  await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const sku = uniqueSku('BREAKDOWN');
  await api.setPrice(sku, 50_000);
  await api.setStock(sku, { available: ORDERS * 2 });
  const before = await snapshot(pg, postmaster);
  const t0 = Date.now();
  log(`${ORDERS} checkouts at ${RATE}/s`);
  const ids = await placeOrders(sku);
  await waitEnded(ids);
  const wallMs = Date.now() - t0;
  // The tracker and the relays finish the last events' bookkeeping after the orders end.
  await sleep(2_000);
  const after = await snapshot(pg, postmaster);
  await pg.end();
  const n = ids.length;
  const perSaga = (x: number) => round(x / n);

  const byRole = new Map<string, number>();
  for (const [pid, now] of after.pg) {
    byRole.set(now.role, (byRole.get(now.role) ?? 0) + now.ms - (before.pg.get(pid)?.ms ?? 0));
  }
  byRole.set('postmaster', after.postmaster - before.postmaster);
  const postgresRows = [...byRole]
    .map(([role, ms]) => ({ process: `postgres: ${role}`, cpuMsPerSaga: perSaga(ms) }))
    .filter((r) => r.cpuMsPerSaga > 0)
    .sort((a, b) => b.cpuMsPerSaga - a.cpuMsPerSaga);
  const processRows = Object.entries(after.processes).map(([name, now]) => {
    const was = before.processes[name];
    return {
      process: name,
      cpuMsPerSaga: was?.pid === now.pid ? perSaga(now.ms - was.ms) : Number.NaN,
    };
  });
  const rows = [...processRows, ...postgresRows];
  const total = round(rows.reduce((sum, r) => sum + (Number.isNaN(r.cpuMsPerSaga) ? 0 : r.cpuMsPerSaga), 0));

  const databaseRows = after.databases
    .map((d) => {
      const was = before.databases.find((b) => b.datname === d.datname);
      const stmts = (list: Snapshot['statements']) =>
        list.filter((s) => s.datname === d.datname).reduce((a, s) => [a[0] + s.calls, a[1] + s.ms], [0, 0]);
      const [calls1, ms1] = stmts(after.statements);
      const [calls0, ms0] = stmts(before.statements);
      return {
        database: d.datname,
        xactsPerSaga: perSaga(d.xacts - (was?.xacts ?? 0)),
        rowsInsertedPerSaga: perSaga(d.inserted - (was?.inserted ?? 0)),
        rowsUpdatedPerSaga: perSaga(d.updated - (was?.updated ?? 0)),
        statementsPerSaga: perSaga(calls1 - calls0),
        execMsPerSaga: perSaga(ms1 - ms0),
      };
    })
    .filter((d) => d.xactsPerSaga >= 0.5);
  const previous = new Map(before.statements.map((s) => [`${s.datname}/${s.id}`, s]));
  const topStatements = after.statements
    .map((s) => {
      const was = previous.get(`${s.datname}/${s.id}`);
      return {
        database: s.datname,
        callsPerSaga: perSaga(s.calls - (was?.calls ?? 0)),
        execMsPerSaga: perSaga(s.ms - (was?.ms ?? 0)),
        statement: s.query,
      };
    })
    .filter((s) => s.callsPerSaga > 0)
    .sort((a, b) => b.execMsPerSaga - a.execMsPerSaga)
    .slice(0, Number(args.top));

  console.table(databaseRows);
  console.table(topStatements.map((s) => ({ ...s, statement: s.statement.slice(0, 70) })));
  log(`${n} sagas in ${(wallMs / 1000).toFixed(1)} s; CPU ms per saga, all processes: ${total}`);
  report(String(args.out), rows, {
    orders: n,
    rate: RATE,
    wallMs,
    cpuMsPerSaga: total,
    walBytesPerSaga: Math.round((after.walBytes - before.walBytes) / n),
    databases: databaseRows,
    topStatements,
    loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
