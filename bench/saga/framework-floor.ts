import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StockGate } from '@checkout/stock-gate';
import { loadStackConfig } from '@checkout/local-stack';
import { percentile, report } from '../report';
import { HttpPathResult, HttpTarget, drive, startBareGate, startServer } from './http-path';

/**
 * What NestJS itself costs per refused request, on each adapter, against issue 16's baseline (a bare Fastify
 * route doing the gate's EVALSHA): the same route in bare Fastify, Nest on express and Nest on Fastify
 * (nest-gate.ts), all answering 409 from one sold-out gate, driven in alternating rounds. Needs the stack's Redis.
 * `node bench/dist/saga/framework-floor.js [--requests 8000] [--rounds 3] [--clients 200] [--out NAME]`.
 */
/** Starts nest-gate.js on `adapter`; resolves once it answers (any status: the probe has no key). */
const startNestGate = (port: number, redisUrl: string, adapter: string): Promise<ChildProcess> =>
  startServer('nest-gate.js', [String(port), redisUrl, adapter], `nest on ${adapter}`, () =>
    fetch(`http://127.0.0.1:${port}/take`, { method: 'POST' }).then((r) => r.status > 0),
  );

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '8000' },
      rounds: { type: 'string', default: '3' },
      clients: { type: 'string', default: '200' },
      out: { type: 'string', default: 'framework-floor' },
    },
  });
  const requests = Number(values.requests);
  const clients = Number(values.clients);
  const config = loadStackConfig();
  const tenantId = 'bench-floor';
  const sku = `FLOOR-${randomUUID()}`;
  const gate = StockGate.connect(config.redis.url, { password: config.auth?.redisPassword });
  await gate.ready(5_000);
  await gate.enable(tenantId, sku, 0);
  const base = config.servicePorts.order + 910;
  const children: ChildProcess[] = [];
  try {
    children.push(await startBareGate(base, config.redis.url));
    children.push(await startNestGate(base + 1, config.redis.url, 'express'));
    children.push(await startNestGate(base + 2, config.redis.url, 'fastify'));
    const body = JSON.stringify({ tenantId, sku });
    const target = (name: string, port: number, child: ChildProcess): HttpTarget => ({
      name,
      origin: `http://127.0.0.1:${port}`,
      path: '/take',
      headers: () => ({ 'content-type': 'application/json', authorization: 'Bearer floor' }),
      body: () => body,
      pid: () => child.pid,
    });
    const targets = [
      target('bare fastify', base, children[0]),
      target('nest express', base + 1, children[1]),
      target('nest fastify', base + 2, children[2]),
    ];
    for (const t of targets) await drive(t, Math.min(requests, 1000), clients); // warm: JIT, connections
    const runs: HttpPathResult[][] = targets.map(() => []);
    for (let round = 1; round <= Number(values.rounds); round += 1) {
      console.log(`[framework-floor] round ${round}, ${requests} requests each`);
      for (const [i, t] of targets.entries()) runs[i].push(await drive(t, requests, clients));
    }
    const median = (xs: number[]) => percentile(xs, 50);
    const bare = runs[0];
    const rows = targets.map((t, i) => ({
      target: t.name,
      'req/s (median)': median(runs[i].map((r) => r.perSecond)),
      'x bare req/s': +median(runs[i].map((r, k) => r.perSecond / bare[k].perSecond)).toFixed(3),
      'cpu ms/req (median)': median(runs[i].map((r) => r.cpuMsPerRequest ?? NaN)),
      'x bare cpu': +median(
        runs[i].map((r, k) => (r.cpuMsPerRequest ?? NaN) / (bare[k].cpuMsPerRequest ?? NaN)),
      ).toFixed(2),
      statuses: JSON.stringify(runs[i][runs[i].length - 1].statuses),
    }));
    report(values.out, rows, { requests, clients, rounds: runs });
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await gate.disable(tenantId, sku);
    await gate.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
