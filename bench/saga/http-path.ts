import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'undici';
import { waitFor } from '@checkout/testing';
import { percentile } from '../report';
import { Sample, cpuBetween, sample } from './procs';

/** One target of the HTTP-path comparison: where to send, and a fresh request body per call. */
export interface HttpTarget {
  name: string;
  origin: string;
  path: string;
  headers: () => Record<string, string>;
  body: () => string;
  /** The process whose CPU is charged to this target (its pid at the time of the run). */
  pid: () => number | undefined;
}

export interface HttpPathResult {
  name: string;
  requests: number;
  seconds: number;
  perSecond: number;
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the serving process per request, in ms (from /proc). */
  cpuMsPerRequest: number | null;
}

const round = (x: number, digits = 2) => +x.toFixed(digits);

/** One POST over `pool`: the answer's status once its body is read, or 0 when none came (refused, reset). */
export function postStatus(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  return pool
    .request({ method: 'POST', path, headers, body })
    .then(async (res) => {
      await res.body.dump();
      return res.statusCode;
    })
    .catch(() => 0);
}

/** `requests` calls at `clients` concurrency over one keep-alive pool; the serving process's CPU from /proc. */
export async function drive(target: HttpTarget, requests: number, clients: number): Promise<HttpPathResult> {
  const pool = new Pool(target.origin, { connections: clients, pipelining: 1 });
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let next = 0;
  const pid = target.pid();
  const cpu0 = pid ? sample({ [target.name]: pid }) : undefined;
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < requests) {
          next += 1;
          const start = performance.now();
          const status = await postStatus(pool, target.path, target.headers(), target.body());
          latencies.push(performance.now() - start);
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu =
    cpu0 && pid ? cpuBetween(cpu0 as Sample, sample({ [target.name]: pid }))[target.name] : undefined;
  return {
    name: target.name,
    requests,
    seconds: round(seconds),
    perSecond: round(requests / seconds, 0),
    statuses,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    cpuMsPerRequest: cpu === undefined ? null : round(cpu / requests, 3),
  };
}

/** Starts the bare Fastify + EVALSHA baseline (bare-gate.js) on `port`; resolves once it answers. */
export function startBareGate(port: number, redisUrl: string): Promise<ChildProcess> {
  return startServer('bare-gate.js', [String(port), redisUrl], 'the bare gate server', () =>
    fetch(`http://127.0.0.1:${port}/take`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: 'bench-none', sku: randomUUID() }),
    }).then((r) => r.ok),
  );
}

/** Runs one of this folder's server scripts in a process of its own; resolves once `answers` says it is up. */
export async function startServer(
  script: string,
  args: string[],
  what: string,
  answers: () => Promise<boolean>,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(__dirname, script), ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitFor(what, () => answers().catch(() => false), { timeoutMs: 30_000, intervalMs: 100 });
  return child;
}
