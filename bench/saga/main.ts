import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import {
  REPO_ROOT,
  loadStackConfig,
  serviceEnv,
  readyOn,
  startDetached,
  stopManaged,
  startService,
  stopService,
  up,
} from '@checkout/local-stack';
import { formatVerdict, runConservationCheck, serviceDataSource, waitFor } from '@checkout/testing';
import { CheckoutApi, ServiceName, conservationTarget, metricValue, uniqueSku } from '@checkout/e2e';
import { percentile, report } from '../report';
import {
  JVMS,
  NODE_SERVICES,
  STACK_PROCESSES,
  Sample,
  cpuBetween,
  jvmJitMs,
  sample,
  stackPids,
} from './procs';
import { SagaWatch } from './watch';
import { HttpPathResult, HttpTarget, drive, postStatus, startBareGate } from './http-path';

/**
 * The cost of one checkout saga on the local stack, as a user loads it (issue 16 item 1, issue 19):
 * - default: `--warmup` checkouts at `--rate` (600, not measured), then `--inflight` sagas held open until the JIT
 *   compilers of Kafka and Connect use less than `--jit-quiet` % of a core over 10 s (at most `--jit-deadline` s;
 *   0 skips it; each phase records the JIT's CPU in its window), then checkouts at a steady `--rate` (20/s), then
 *   a closed loop holding `--inflight` sagas open to find the completed sagas/s at saturation, then a steady 80%
 *   of it; per phase the CPU ms per completed saga of
 *   every process (/proc/<pid>/stat), accepted -> `order.paid` and -> SHIPPED percentiles, event-loop delay p99
 *   per service (prom-client's `nodejs_eventloop_lag_p99_seconds`, reset at each scrape); then the closed loop
 *   again until the `--rss` checkpoints (completed sagas of the run) to read each service's RSS under load. RSS
 *   at rest is read twice, after the steady phase and after the last checkpoint, once the stack is quiet and every
 *   Node service's RSS has stopped falling (`rssAtRest`); the ratio of the two is `rssRatioAtRest`. `--rss 0`
 *   takes no RSS reading at all.
 * - `--idle S`: CPU per process over S seconds without traffic, each service's /metrics scraped every
 *   `--scrape-every` seconds (15, as a Prometheus would; 0: never), since the gauges are read when scraped.
 * - `--flash N`: N checkouts for 500 units at 200 concurrent clients with the Redis gate on, then
 *   `--flash-off M` with the gate off (every one of those is a saga: M is bounded separately).
 *   `--flash-replicas R` serves them with R order processes, as Kubernetes runs order (2 replicas at least) behind
 *   one Service: the stack's own and R-1 started for the run on ports of their own, each client keeping to one
 *   (connections spread as a Service spreads them). One Redis gate, one database, one Kafka group for all.
 * - `--http N`: issue 16's HTTP-path ratios. N refusals by the gate (a sold-out hot SKU) through
 *   `POST /v1/checkout` against N calls of a bare Fastify route doing the same EVALSHA (bench/saga/bare-gate.ts),
 *   alternated over `--http-rounds` rounds at `--flash-clients` concurrency; then `--http-accepted` accepted
 *   checkouts (each a saga) against the same baseline. Ratios of requests/s, and CPU ms per request of each server.
 * - `--cpu-prof`: the Node services are restarted with --cpu-prof for the run and again without it after;
 *   their .cpuprofile files land in bench/results/profiles/<out>/.
 * The machine is shared: CPU time per process is meaningful, wall-clock rates are noisy; /proc/loadavg is
 * recorded with every phase. Results merge into bench/results/<out>.json (default saga.json).
 */
const { values: args } = parseArgs({
  options: {
    idle: { type: 'string' },
    'scrape-every': { type: 'string', default: '15' },
    flash: { type: 'string' },
    'flash-off': { type: 'string', default: '1000' },
    'flash-units': { type: 'string', default: '500' },
    'flash-clients': { type: 'string', default: '200' },
    'flash-replicas': { type: 'string', default: '1' },
    http: { type: 'string' },
    'http-rounds': { type: 'string', default: '3' },
    'http-accepted': { type: 'string', default: '1000' },
    rate: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '600' },
    low: { type: 'string', default: '600' },
    sat: { type: 'string', default: '60' },
    high: { type: 'string', default: '30' },
    inflight: { type: 'string', default: '200' },
    rss: { type: 'string', default: '1000,10000' },
    'cpu-prof': { type: 'boolean', default: false },
    out: { type: 'string', default: 'saga' },
    'no-up': { type: 'boolean', default: false },
    'jit-quiet': { type: 'string', default: '2' },
    'jit-deadline': { type: 'string', default: '300' },
  },
});
const num = (name: keyof typeof args) => {
  const value = Number(args[name]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number >= 0`);
  return value;
};

const RESULTS = join(__dirname, '..', '..', 'results');
const config = loadStackConfig();
const api = new CheckoutApi('acme');
const ORDER_URL = `http://127.0.0.1:${config.servicePorts.order}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits = 1) => +x.toFixed(digits);
const log = (line: string) => console.log(`[bench:saga] ${line}`);

/** Percentiles of a list of ms values, or null when empty. */
function pcts(xs: number[]) {
  if (!xs.length) return null;
  return {
    n: xs.length,
    p50: round(percentile(xs, 50)),
    p95: round(percentile(xs, 95)),
    p99: round(percentile(xs, 99)),
  };
}

/** One sample of a Node service's /metrics (e2e's `metricValue`), or null when the scrape fails or has none. */
async function sampleOf(service: string, name: string): Promise<number | null> {
  try {
    return await metricValue(
      service === 'psp-simulator' ? 'psp' : (service as ServiceName | 'saga-tracker'),
      name,
    );
  } catch {
    return null;
  }
}

/**
 * How often the services sample their event loop (the service kit's `eventLoopMonitoringPrecision`). Node's delay
 * histogram records each whole interval between samples, so prom-client's percentiles read this much more than
 * the delay: a loop that is never late reads 200 ms.
 */
const EVENT_LOOP_SAMPLE_MS = 200;

/**
 * Scrapes one service's /metrics and returns its event-loop delay p99 in ms, the sampling interval taken off (the
 * scrape resets the histogram).
 */
async function eventLoopP99(service: string): Promise<number | null> {
  const p99 = await sampleOf(service, 'nodejs_eventloop_lag_p99_seconds');
  return p99 === null ? null : round(Math.max(0, p99 * 1000 - EVENT_LOOP_SAMPLE_MS), 2);
}

const eventLoopAll = async () =>
  Object.fromEntries(await Promise.all(NODE_SERVICES.map(async (s) => [s, await eventLoopP99(s)] as const)));

/** Units of the load run's SKU: more than any run sells. */
const SKU_UNITS = 100_000_000;

/** A SKU priced and stocked for a long run. */
async function sellableSku(prefix: string, available: number): Promise<string> {
  const sku = uniqueSku(prefix);
  await api.setPrice(sku, 50_000);
  await api.setStock(sku, { available });
  return sku;
}

/** The headers of one checkout by the dev tenant, under a new Idempotency-Key unless a retry gives its own. */
const checkoutHeaders = (idempotencyKey: string = randomUUID()) => ({
  authorization: `Bearer ${api.key}`,
  'content-type': 'application/json',
  'idempotency-key': idempotencyKey,
});

const body = (sku: string) => ({
  customerId: `bench-${randomUUID()}`,
  currency: 'VND',
  lines: [{ sku, quantity: 1 }],
  payment: { token: 'tok_success' },
});

/** One checkout; registers it with the watch when accepted. */
async function offer(watch: SagaWatch, sku: string, errors: Map<string, number>): Promise<void> {
  // Not the e2e client: its 30 s timeout and resend would drop slow accepts from the latency figures.
  const answer = await fetch(`${ORDER_URL}/v1/checkout`, {
    method: 'POST',
    headers: checkoutHeaders(),
    body: JSON.stringify(body(sku)),
    signal: AbortSignal.timeout(120_000),
  })
    .then(async (res) => ({ status: res.status, text: await res.text() }))
    .catch((error: unknown) => ({ status: 0, text: String(error) }));
  const at = performance.now();
  if (answer.status === 202) {
    watch.accepted((JSON.parse(answer.text) as { orderId: string }).orderId, at);
    return;
  }
  const key = `${answer.status} ${answer.text.slice(0, 120)}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
}

interface PhaseResult {
  name: string;
  offered: number;
  completed: number;
  failed: number;
  seconds: number;
  sagasPerSecond: number;
  cpuMsPerSaga: number;
  cpuMsPerSagaByProcess: Record<string, number>;
  paidLatencyMs: ReturnType<typeof pcts>;
  shippedLatencyMs: ReturnType<typeof pcts>;
  eventLoopP99Ms: Record<string, number | null>;
  /** CPU ms the JVMs' JIT compilers used in the window: near 0 when the phase was measured on warm JVMs. */
  jitMs: Record<string, number>;
  loadavg: number[];
  errors: Record<string, number>;
}

interface Started {
  pids: Record<string, number>;
  sample: Sample;
  jitMs: Record<string, number>;
  /** Shipments seen on Kafka when the window opened. */
  shipped: number;
}

/** The start of a measured window: resets the services' event-loop histograms and reads every process. */
async function begin(watch?: SagaWatch): Promise<Started> {
  await eventLoopAll();
  const pids = stackPids(config);
  return { pids, sample: sample(pids), jitMs: jvmJitMs(pids), shipped: watch?.shippedSeen ?? 0 };
}

/** CPU, rate and latencies of the sagas `ids` over a window; `completed` counts the sagas it is charged for. */
async function summarise(
  name: string,
  watch: SagaWatch,
  ids: string[],
  start: Started,
  errors: Map<string, number>,
  completedInWindow?: number,
): Promise<PhaseResult> {
  const end = sample(start.pids);
  const jitEnd = jvmJitMs(start.pids);
  const eventLoopP99Ms = await eventLoopAll();
  const times = ids.map((id) => watch.sagas.get(id)!);
  const done = times.filter((t) => t.shipped !== undefined);
  // Every shipment of the window, also of a checkout whose 202 was lost (it is a saga the stack paid for).
  const completed = completedInWindow ?? watch.shippedSeen - start.shipped;
  const cpu = cpuBetween(start.sample, end);
  const per = (ms: number) => round(ms / Math.max(1, completed), 2);
  const seconds = (end.at - start.sample.at) / 1000;
  return {
    name,
    offered: ids.length + [...errors.values()].reduce((a, b) => a + b, 0),
    completed,
    failed: times.filter((t) => t.failed).length,
    seconds: round(seconds),
    sagasPerSecond: round(completed / seconds, 2),
    cpuMsPerSaga: per(cpu.total),
    cpuMsPerSagaByProcess: Object.fromEntries(STACK_PROCESSES.map((p) => [p, per(cpu[p] ?? 0)])),
    paidLatencyMs: pcts(times.filter((t) => t.paid !== undefined).map((t) => t.paid! - t.accepted)),
    shippedLatencyMs: pcts(done.map((t) => t.shipped! - t.accepted)),
    eventLoopP99Ms,
    jitMs: Object.fromEntries(JVMS.map((j) => [j, round(jitEnd[j] - start.jitMs[j])])),
    loadavg: end.loadavg,
    errors: Object.fromEntries(errors),
  };
}

/** Sagas accepted since a snapshot of the watch's keys. */
const newSagas = (watch: SagaWatch, before: Set<string>) =>
  [...watch.sagas.keys()].filter((id) => !before.has(id));

/** Waits (bounded) until every one of the sagas has ended; logs how many did not. */
async function drain(name: string, watch: SagaWatch, ids: string[], timeoutMs = 180_000): Promise<void> {
  const open = () =>
    ids.filter((id) => {
      const t = watch.sagas.get(id)!;
      return t.shipped === undefined && !t.failed;
    });
  await waitFor(`the ${name} phase's sagas to end`, async () => open().length === 0, {
    timeoutMs,
    intervalMs: 250,
  }).catch(() => log(`${name}: ${open().length} sagas still open after ${timeoutMs / 1000} s`));
}

/** Offers `count` checkouts at a steady `rate` per second (open loop: a slow answer does not slow the offer). */
async function steady(name: string, watch: SagaWatch, sku: string, rate: number, count: number) {
  log(`${name}: ${count} checkouts at ${round(rate)}/s`);
  const errors = new Map<string, number>();
  const before = new Set(watch.sagas.keys());
  const start = await begin(watch);
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  const every = Math.max(1, Math.round(rate * 5));
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(offer(watch, sku, errors));
    if (i % every === 0)
      log(`${name}: offered ${i}, completed ${watch.completed}, in flight ${watch.inFlight}`);
  }
  await Promise.all(pending);
  const ids = newSagas(watch, before);
  await drain(name, watch, ids);
  return summarise(name, watch, ids, start, errors);
}

/** Keeps `inflight` sagas open (a new checkout as soon as one ends) until `until()` says stop. */
async function closedLoop(
  watch: SagaWatch,
  sku: string,
  inflight: number,
  errors: Map<string, number>,
  until: () => boolean,
): Promise<void> {
  await Promise.all(
    Array.from({ length: Math.min(inflight, 64) }, async () => {
      while (!until()) {
        if (watch.inFlight >= inflight) await sleep(20);
        else await offer(watch, sku, errors);
      }
    }),
  );
}

/**
 * Saturation: `inflight` sagas held open; after a 10 s warm-up, the sagas completed in a window of `seconds`
 * (the pipeline is as full at both ends of it, so the CPU of the window is that of its completed sagas).
 */
async function saturation(watch: SagaWatch, sku: string, inflight: number, seconds: number) {
  log(`saturation: ${inflight} sagas open, 10 s warm-up, ${seconds} s measured`);
  const errors = new Map<string, number>();
  const before = new Set(watch.sagas.keys());
  const t0 = performance.now();
  let start: Started | undefined;
  let completedAtStart = 0;
  const progress = setInterval(
    () => log(`saturation: completed ${watch.completed}, in flight ${watch.inFlight}`),
    5_000,
  );
  const warm = sleep(10_000).then(async () => {
    start = await begin(watch);
    completedAtStart = watch.shippedSeen;
  });
  await closedLoop(watch, sku, inflight, errors, () => performance.now() - t0 > 10_000 + seconds * 1000);
  await warm;
  const result = await summarise(
    'saturation',
    watch,
    newSagas(watch, before),
    start!,
    errors,
    watch.shippedSeen - completedAtStart,
  );
  clearInterval(progress);
  await drain('saturation', watch, newSagas(watch, before));
  return result;
}

/** The window over which the JVMs' JIT must have been quiet, and how often it is read. */
const JIT_WINDOW_MS = 10_000;
const JIT_EVERY_MS = 2_000;

/**
 * Sagas held open (the closed loop) until each JVM's JIT compilers used less than `--jit-quiet` % of one core over
 * the last 10 s, or `--jit-deadline` seconds passed. Kafka and Connect compile their hot code for minutes after a
 * start: on a stack just started, at 20/s, Kafka and Connect cost 12.5 and 14.4 ms per saga and order.paid's p50 was
 * 0.76 s; on the same stack warm, 6.9, 5.0 and 0.16 s (s44/baseline, baseline2). A fixed number of warm-up
 * sagas was not enough after a restart and too many otherwise.
 */
async function warmJvms(watch: SagaWatch, sku: string, inflight: number) {
  const pids = stackPids(config);
  const quietMs = (num('jit-quiet') / 100) * JIT_WINDOW_MS;
  const deadline = num('jit-deadline') * 1000;
  const t0 = performance.now();
  const shipped0 = watch.shippedSeen;
  const jit0 = jvmJitMs(pids);
  const history: { at: number; jit: Record<string, number> }[] = [{ at: t0, jit: jit0 }];
  let quiet = false;
  const errors = new Map<string, number>();
  let reads = 0;
  const check = setInterval(() => {
    reads += 1;
    const now = performance.now();
    const jit = jvmJitMs(pids);
    history.push({ at: now, jit });
    while (history.length > 1 && history[1].at <= now - JIT_WINDOW_MS) history.shift();
    const first = history[0];
    const used = Object.fromEntries(JVMS.map((j) => [j, round(jit[j] - first.jit[j])]));
    quiet = now - first.at >= JIT_WINDOW_MS - JIT_EVERY_MS && JVMS.every((j) => used[j] <= quietMs);
    if (reads % 5 === 0 || quiet)
      log(`JVM warm-up: JIT ms over the last ${round((now - first.at) / 1000)} s ${JSON.stringify(used)}`);
  }, JIT_EVERY_MS);
  log(
    `JVM warm-up (not measured): ${inflight} sagas open until the JIT uses < ${num('jit-quiet')}% of a core`,
  );
  await closedLoop(watch, sku, inflight, errors, () => quiet || performance.now() - t0 > deadline);
  clearInterval(check);
  await drain('JVM warm-up', watch, [...watch.sagas.keys()]);
  const jit1 = jvmJitMs(pids);
  const result = {
    settled: quiet,
    seconds: round((performance.now() - t0) / 1000),
    sagas: watch.shippedSeen - shipped0,
    jitMs: Object.fromEntries(JVMS.map((j) => [j, round(jit1[j] - jit0[j])])),
    jitMsSinceStart: Object.fromEntries(JVMS.map((j) => [j, round(jit1[j])])),
  };
  log(`JVM warm-up: ${quiet ? 'settled' : 'NOT settled'} ${JSON.stringify(result)}`);
  return result;
}

/**
 * The conservation checker over every saga of the run and its SKU (the run's alone): a saturated stack must
 * still sell each unit once, charge each order once and end every saga.
 */
async function conservationOf(sku: string, orderIds: string[]) {
  log(`conservation: checking ${orderIds.length} orders`);
  const check = () =>
    runConservationCheck(conservationTarget('acme', { concurrency: 16 }), {
      skus: [{ sku, initial: SKU_UNITS, exclusive: true }],
      orderIds,
    });
  // A saga's last event is seen a moment before its order shows SHIPPED: asked again a few times.
  let verdict = await check();
  for (let again = 0; again < 3 && !verdict.clean; again += 1) {
    log(`conservation: ${formatVerdict(verdict)}; asking again in 5 s`);
    await sleep(5_000);
    verdict = await check();
  }
  log(`conservation: ${formatVerdict(verdict)}`);
  return {
    clean: verdict.clean,
    orders: verdict.orders,
    violations: verdict.violations.length,
    stuck: verdict.stuck.length,
    byStatus: verdict.byStatus,
  };
}

/** RSS of every process of the stack now, in MB. */
function rssNow(): Record<string, number> {
  const s = sample(stackPids(config));
  return Object.fromEntries(Object.entries(s.rssMb).map(([k, v]) => [k, round(v)]));
}

/** How long no Node service's RSS may have been more than 2% above its latest sample for the stack to be at rest. */
const REST_SETTLE_MS = 45_000;
/** The longest a rest reading waits for that before it takes what it has (and says so). */
const REST_DEADLINE_MS = 240_000;

/** A reading of the stack at rest. */
interface RestReading {
  sagas: number;
  mb: Record<string, number>;
  /** V8 heap in use per Node service (its /metrics), MB: after the idle GCs, about its live data. */
  heapUsedMb: Record<string, number | null>;
  /** Seconds from the call to the reading. */
  waitedS: number;
  settled: boolean;
}

/**
 * RSS of every process at rest: no saga open, and no sample of a Node service's RSS in the last `REST_SETTLE_MS`
 * more than 2% above its latest one (it has stopped falling). A service that ran a load keeps the heap the load
 * grew (V8's young generation at its 32 MB maximum, the old space two to three times its live data) until V8's
 * memory reducer sees it idle and collects; on this stack that came 15 to 150 s after the last saga (order
 * 239 -> 135 MB, payment 319 -> 143 MB, bench/results/s39). A reading 5 s after the load, as this bench took
 * before, measured the load's headroom rather than what a service keeps, and a leak shows in what it keeps.
 * Sampled every 2 s.
 */
async function rssAtRest(watch: SagaWatch): Promise<RestReading> {
  const t0 = Date.now();
  const history: { at: number; mb: Record<string, number> }[] = [];
  let settled = false;
  for (;;) {
    const now = Date.now();
    history.push({ at: now, mb: rssNow() });
    while (history[0].at < now - REST_SETTLE_MS) history.shift();
    const latest = history[history.length - 1].mb;
    settled =
      now - t0 >= REST_SETTLE_MS &&
      NODE_SERVICES.every((s) => history.every((h) => h.mb[s] <= latest[s] * 1.02));
    if (settled || now - t0 >= REST_DEADLINE_MS) break;
    await sleep(2_000);
  }
  const mb = history[history.length - 1].mb;
  const heapUsedMb = Object.fromEntries(
    await Promise.all(
      NODE_SERVICES.map(async (s) => {
        const used = await sampleOf(s, 'nodejs_heap_size_used_bytes');
        return [s, used === null ? null : round(used / 2 ** 20)] as const;
      }),
    ),
  );
  const waitedS = round((Date.now() - t0) / 1000);
  log(
    `RSS at rest after ${watch.shippedSeen} sagas (${settled ? 'settled' : 'NOT settled'} after ${waitedS} s): ` +
      `${JSON.stringify(mb)}, V8 heap used ${JSON.stringify(heapUsedMb)}`,
  );
  return { sagas: watch.shippedSeen, mb, heapUsedMb, waitedS, settled };
}

/** RSS of every process once the run's completed sagas pass each checkpoint. */
function rssCheckpoints(watch: SagaWatch, checkpoints: number[]) {
  const rss: Record<string, Record<string, number>> = {};
  const timer = setInterval(() => {
    for (const c of checkpoints) {
      if (rss[`after${c}`] || watch.shippedSeen < c) continue;
      rss[`after${c}`] = rssNow();
      log(`RSS after ${c} sagas: ${JSON.stringify(rss[`after${c}`])}`);
    }
  }, 500);
  return { rss, stop: () => clearInterval(timer) };
}

/** The default run: 20/s, saturation, 80% of saturation, then sagas until the last RSS checkpoint. */
async function loadRun(): Promise<{ rows: Record<string, unknown>[]; meta: Record<string, unknown> }> {
  const checkpoints = String(args.rss)
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const watch = await new SagaWatch(config).start();
  const sku = await sellableSku('BENCH', SKU_UNITS);
  const rss = rssCheckpoints(watch, checkpoints);
  const rate = num('rate');
  // Services just started (npm run up, a restart) spend the first few hundred sagas compiling hot code: at 20/s
  // that doubled the CPU per saga and put order.paid's p50 at 0.8 s instead of 0.17 s. The phases measure a
  // warm stack; the warm-up's sagas are not counted.
  const warmup = num('warmup');
  if (warmup > 0) await steady(`warm-up (not measured) ${rate}/s`, watch, sku, rate, warmup);
  const jvmWarmup = num('jit-deadline') > 0 ? await warmJvms(watch, sku, num('inflight')) : null;
  const low = await steady(`steady ${rate}/s`, watch, sku, rate, num('low'));
  // `--rss 0`: no RSS readings at all, at rest either (each waits for the stack to settle, up to 4 minutes).
  const restEarly = checkpoints.length > 0 ? await rssAtRest(watch) : undefined;
  // `--sat 0` skips saturation, and with it the 80% phase that is paced from it; `--high 0` skips that one alone.
  const sat = num('sat') > 0 ? await saturation(watch, sku, num('inflight'), num('sat')) : undefined;
  const highRate = Math.max(1, (sat?.sagasPerSecond ?? 0) * 0.8);
  const high =
    sat && num('high') > 0
      ? await steady('80% of saturation', watch, sku, highRate, Math.round(highRate * num('high')))
      : undefined;
  const last = checkpoints[checkpoints.length - 1] ?? 0;
  if (watch.shippedSeen < last) {
    log(`closed loop until ${last} sagas for the RSS checkpoints`);
    const errors = new Map<string, number>();
    const progress = setInterval(() => log(`rss: completed ${watch.shippedSeen} of ${last}`), 10_000);
    await closedLoop(watch, sku, num('inflight'), errors, () => watch.shippedSeen >= last);
    clearInterval(progress);
    await waitFor('the last RSS checkpoint', async () => rss.rss[`after${last}`], {
      timeoutMs: 5_000,
      intervalMs: 100,
    });
  }
  rss.stop();
  // The closed loops stop with sagas still open: the check reads stock first, so they must end first.
  await drain('run', watch, [...watch.sagas.keys()]);
  const restLate = checkpoints.length > 0 ? await rssAtRest(watch) : undefined;
  await watch.stop();
  const conservation = await conservationOf(sku, [...watch.sagas.keys()]);
  const phases = [low, sat, high].filter((ph) => ph !== undefined);
  const cpuOf = (ph: typeof low | undefined, p: string) =>
    ph === undefined ? '' : p === 'total' ? ph.cpuMsPerSaga : ph.cpuMsPerSagaByProcess[p];
  const rows = ['total', ...STACK_PROCESSES].map((p) => ({
    process: p,
    [`cpu ms/saga @${rate}/s`]: cpuOf(low, p),
    'cpu ms/saga @sat': cpuOf(sat, p),
    'cpu ms/saga @80%': cpuOf(high, p),
    ...Object.fromEntries(
      checkpoints.map((c) => [`rss MB @${c}`, p === 'total' ? '' : rss.rss[`after${c}`]?.[p]]),
    ),
    ...Object.fromEntries(
      [restEarly, restLate].flatMap((r) =>
        r ? [[`rss MB at rest @${r.sagas}`, p === 'total' ? '' : r.mb[p]]] : [],
      ),
    ),
    'el p99 ms @sat': sat?.eventLoopP99Ms[p] ?? '',
  }));
  for (const ph of phases)
    log(
      `${ph.name}: ${ph.completed} completed, ${ph.failed} failed, ${ph.sagasPerSecond}/s, ` +
        `paid p50/p95/p99 ${JSON.stringify(ph.paidLatencyMs)}, shipped ${JSON.stringify(ph.shippedLatencyMs)}, load ${ph.loadavg.join(' ')}`,
    );
  const first = checkpoints[0];
  return {
    rows,
    meta: {
      cpuMsPerSaga: sat?.cpuMsPerSaga ?? null,
      cpuMsPerSagaByProcess: sat?.cpuMsPerSagaByProcess ?? null,
      sagasPerSecond: sat?.sagasPerSecond ?? null,
      paidLatencyMs: low.paidLatencyMs,
      shippedLatencyMs: low.shippedLatencyMs,
      paidLatencyMsAt80: high?.paidLatencyMs ?? null,
      shippedLatencyMsAt80: high?.shippedLatencyMs ?? null,
      eventLoopP99Ms: Object.fromEntries(phases.map((ph) => [ph.name, ph.eventLoopP99Ms])),
      rssMb: rss.rss,
      rssAtRest: restEarly && restLate ? [restEarly, restLate] : null,
      rssRatioAtRest:
        restEarly && restLate
          ? Object.fromEntries(NODE_SERVICES.map((s) => [s, round(restLate.mb[s] / restEarly.mb[s], 2)]))
          : null,
      conservation,
      rssRatio:
        first && last && rss.rss[`after${first}`] && rss.rss[`after${last}`]
          ? Object.fromEntries(
              NODE_SERVICES.map((s) => [
                s,
                round(rss.rss[`after${last}`][s] / rss.rss[`after${first}`][s], 2),
              ]),
            )
          : null,
      jvmWarmup,
      phases,
    },
  };
}

/** CPU of every process over `seconds` without traffic. */
async function idleRun(seconds: number) {
  const scrapeEvery = num('scrape-every');
  log(`idle: ${seconds} s without traffic, /metrics scraped every ${scrapeEvery || 'never'} s`);
  const start = await begin();
  const until = Date.now() + seconds * 1000;
  let scrapes = 0;
  let nextLog = Date.now() + 10_000;
  let nextScrape = scrapeEvery > 0 ? Date.now() : Number.POSITIVE_INFINITY;
  while (Date.now() < until) {
    if (Date.now() >= nextScrape) {
      await eventLoopAll();
      scrapes += 1;
      nextScrape += scrapeEvery * 1000;
    }
    await sleep(Math.max(0, Math.min(nextLog, nextScrape, until) - Date.now()));
    if (Date.now() >= nextLog) {
      log(`idle: ${Math.max(0, Math.round((until - Date.now()) / 1000))} s left`);
      nextLog += 10_000;
    }
  }
  const end = sample(start.pids);
  const wall = end.at - start.sample.at;
  const cpu = cpuBetween(start.sample, end);
  const pct = (ms: number) => round((ms / wall) * 100, 2);
  const rows = ['total', ...STACK_PROCESSES].map((p) => ({
    process: p,
    'cpu ms': round(cpu[p] ?? 0),
    '% of one core': pct(cpu[p] ?? 0),
  }));
  const machineBusy =
    ((end.machine.busyMs - start.sample.machine.busyMs) /
      (end.machine.totalMs - start.sample.machine.totalMs)) *
    100;
  return {
    rows,
    meta: {
      idleCpu: {
        seconds: round(wall / 1000),
        scrapeEverySeconds: scrapeEvery,
        scrapes,
        totalPctOfOneCore: pct(cpu.total),
        pctOfOneCore: Object.fromEntries(STACK_PROCESSES.map((p) => [p, pct(cpu[p] ?? 0)])),
        cpuMs: Object.fromEntries(STACK_PROCESSES.map((p) => [p, round(cpu[p] ?? 0)])),
        machineBusyPct: round(machineBusy, 1),
        loadavg: end.loadavg,
      },
    },
  };
}

/**
 * Checkout answers by status (a 503 GATE_TIMEOUT is retried with the same key, as the contract allows), over
 * one keep-alive connection per client (undici's Pool, as the HTTP-path run drives): the buyers of a real sale
 * are on other machines, and a client as costly as `fetch` took a fifth of this machine's CPU from the stack.
 */
async function flashAttempts(sku: string, attempts: number, clients: number, origins = [ORDER_URL]) {
  const statuses = new Map<number, number>();
  // Client c talks to origins[c % n] over its share of the connections.
  const pools = origins.map(
    (origin, i) =>
      new Pool(origin, { connections: Math.ceil((clients - i) / origins.length), pipelining: 1 }),
  );
  const send = (client: number, key: string, payload: string) =>
    postStatus(pools[client % pools.length], '/v1/checkout', checkoutHeaders(key), payload);
  let next = 0;
  let retries = 0;
  const t0 = performance.now();
  const progress = setInterval(() => log(`flash: ${next} of ${attempts} sent`), 5_000);
  try {
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        while (next < attempts) {
          next += 1;
          const key = randomUUID();
          const payload = JSON.stringify(body(sku));
          let status = await send(client, key, payload);
          for (let i = 0; i < 5 && status === 503; i++) {
            retries += 1;
            status = await send(client, key, payload);
          }
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
  } finally {
    clearInterval(progress);
    await Promise.all(pools.map((p) => p.close()));
  }
  return {
    seconds: round((performance.now() - t0) / 1000, 2),
    statuses: Object.fromEntries(statuses),
    retries,
  };
}

/** Issue 16's flash sale: N attempts for 500 units, gate on; then M attempts with the gate off. */
async function flashRun(attempts: number) {
  const units = num('flash-units');
  const clients = num('flash-clients');
  const replicas = Math.max(1, num('flash-replicas'));
  const db = await serviceDataSource('order_svc', 2);
  const rowsFor = async (sku: string) =>
    Number(
      (await db.query(`SELECT count(DISTINCT order_id) AS n FROM order_lines WHERE sku = $1`, [sku]))[0].n,
    );
  const extra = await startOrderReplicas(replicas - 1);
  try {
    const on = await sellableSku('FLASH-ON', units);
    await api.setFlashSale(on, true);
    log(
      `flash, gate on: ${attempts} attempts for ${units} units at ${clients} clients, ${replicas} order process(es)`,
    );
    const gated = await flashAttempts(on, attempts, clients, [ORDER_URL, ...extra.origins]);
    const gatedRows = await rowsFor(on);
    const offAttempts = num('flash-off');
    const off = await sellableSku('FLASH-OFF', units);
    log(`flash, gate off: ${offAttempts} attempts for ${units} units at ${clients} clients`);
    const ungated = await flashAttempts(off, offAttempts, clients, [ORDER_URL, ...extra.origins]);
    const t0 = performance.now();
    const settled = await waitFor(
      'the gate-off sale to settle (nothing reserved)',
      async () => {
        const s = await api.stock(off);
        return s.reserved === 0 && s.sold + s.available === units ? s : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 1_000 },
    ).catch(() => undefined);
    const flash = {
      units,
      clients,
      orderReplicas: replicas,
      gateOn: { attempts, ...gated, accepted: gated.statuses[202] ?? 0, orderRows: gatedRows },
      gateOff: {
        attempts: offAttempts,
        ...ungated,
        accepted: ungated.statuses[202] ?? 0,
        orderRows: await rowsFor(off),
        sold: settled?.sold ?? null,
        settleSeconds: settled ? round((performance.now() - t0) / 1000) : null,
      },
    };
    const rows = [
      {
        gate: 'on',
        attempts,
        seconds: gated.seconds,
        accepted: flash.gateOn.accepted,
        'order rows': gatedRows,
        statuses: JSON.stringify(gated.statuses),
      },
      {
        gate: 'off',
        attempts: offAttempts,
        seconds: ungated.seconds,
        accepted: flash.gateOff.accepted,
        'order rows': flash.gateOff.orderRows,
        sold: flash.gateOff.sold,
        statuses: JSON.stringify(ungated.statuses),
      },
    ];
    return { rows, meta: { flash } };
  } finally {
    await extra.stop();
    await db.destroy();
  }
}

/**
 * `count` more order processes beside the stack's (the flash sale's `--flash-replicas`), each with the stack's
 * environment on an API and an internal port of its own, ready when this returns; `stop()` ends them (SIGTERM:
 * their consumers leave the group as a replica's do when scaled in).
 */
async function startOrderReplicas(count: number): Promise<{ origins: string[]; stop(): Promise<void> }> {
  const names: string[] = [];
  const origins: string[] = [];
  const stop = async () => {
    await Promise.all(names.map((name) => stopManaged(config.run, name)));
  };
  try {
    for (let k = 1; k <= count; k += 1) {
      const name = `order-replica-${k}`;
      const ports = {
        api: config.servicePorts.order + 50 * k,
        internal: config.internalPorts.order + 50 * k,
      };
      names.push(name);
      await startNodeProcess(name, 'order', { ports });
      log(`${name} ready on :${ports.api}`);
      origins.push(`http://127.0.0.1:${ports.api}`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { origins, stop };
}

/** Issue 16: the checkout's HTTP path against a bare Fastify route doing the same Redis EVALSHA. */
async function httpPathRun(requests: number) {
  const clients = num('flash-clients');
  const rounds = Math.max(1, num('http-rounds'));
  const soldOut = await sellableSku('HTTP-SOLD-OUT', 0);
  await api.setFlashSale(soldOut, true, 0);
  const barePort = config.servicePorts.order + 900;
  const bare = await startBareGate(barePort, config.redis.url);
  const orderPid = () => stackPids(config).order;
  const checkoutTarget = (sku: string): HttpTarget => ({
    name: 'order',
    origin: ORDER_URL,
    path: '/v1/checkout',
    headers: () => checkoutHeaders(),
    body: () => JSON.stringify(body(sku)),
    pid: orderPid,
  });
  const bareTarget = (sku: string): HttpTarget => ({
    name: 'bare',
    origin: `http://127.0.0.1:${barePort}`,
    path: '/take',
    headers: () => ({ 'content-type': 'application/json' }),
    body: () => JSON.stringify({ tenantId: 'acme', sku }),
    pid: () => bare.pid,
  });
  const runs: { phase: string; bare: HttpPathResult; order: HttpPathResult }[] = [];
  try {
    // Warm both (JIT, pools), then alternate so that a noisy neighbour hits both alike.
    await drive(bareTarget(soldOut), Math.min(requests, 500), clients);
    await drive(checkoutTarget(soldOut), Math.min(requests, 500), clients);
    for (let round = 1; round <= rounds; round += 1) {
      log(`http path, refusals: round ${round} of ${rounds}, ${requests} requests each`);
      const b = await drive(bareTarget(soldOut), requests, clients);
      const o = await drive(checkoutTarget(soldOut), requests, clients);
      runs.push({ phase: 'refused', bare: b, order: o });
    }
    const accepted = num('http-accepted');
    if (accepted > 0) {
      const plenty = await sellableSku('HTTP-ACCEPT', accepted * 2);
      await api.setFlashSale(plenty, true);
      const bareSku = `HTTP-BARE-${randomUUID()}`; // not gated: the take answers not-gated, one EVALSHA as well
      log(`http path, accepted: ${accepted} checkouts (each a saga)`);
      const b = await drive(bareTarget(bareSku), accepted, clients);
      const o = await drive(checkoutTarget(plenty), accepted, clients);
      runs.push({ phase: 'accepted', bare: b, order: o });
    }
  } finally {
    bare.kill('SIGTERM');
  }
  const refused = runs.filter((r) => r.phase === 'refused');
  const median = (xs: number[]) => percentile(xs, 50);
  const ratio = (rs: typeof runs) => round(median(rs.map((r) => r.order.perSecond / r.bare.perSecond)), 3);
  const rows = runs.map((r) => ({
    phase: r.phase,
    'bare req/s': r.bare.perSecond,
    'order req/s': r.order.perSecond,
    ratio: round(r.order.perSecond / r.bare.perSecond, 3),
    'bare cpu ms/req': r.bare.cpuMsPerRequest,
    'order cpu ms/req': r.order.cpuMsPerRequest,
    'order p99 ms': r.order.p99Ms,
    'order statuses': JSON.stringify(r.order.statuses),
  }));
  const acceptedRuns = runs.filter((r) => r.phase === 'accepted');
  return {
    rows,
    meta: {
      httpPath: {
        clients,
        refusedRatio: ratio(refused),
        acceptedRatio: acceptedRuns.length ? ratio(acceptedRuns) : null,
        orderCpuMsPerRefusal: round(median(refused.map((r) => r.order.cpuMsPerRequest ?? NaN)), 3),
        bareCpuMsPerRequest: round(median(refused.map((r) => r.bare.cpuMsPerRequest ?? NaN)), 3),
        runs,
      },
    },
  };
}

/**
 * Restarts every Node service with --cpu-prof writing into `dir` (or, with null, as the stack starts them);
 * stopping a profiled service (SIGTERM, a clean exit) writes its profile. Node refuses --cpu-prof in
 * NODE_OPTIONS, so the profiled ones are started here with the stack's own environment and pid files.
 */
async function restartNodeServices(profileDir: string | null): Promise<void> {
  for (const name of NODE_SERVICES) {
    await stopService(name, log);
    if (!profileDir) {
      await startService(name, log);
      continue;
    }
    await startNodeProcess(name, name, {
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`],
      ports: { api: config.servicePorts[name], internal: config.internalPorts[name] },
    });
    log(`${name} started with --cpu-prof`);
  }
}

/**
 * Starts a process of a Node service outside the stack's own start (a profiled service, an extra order replica):
 * detached, recorded under `name`, with the stack's environment of `service` and the ports given; returns once
 * its /health/ready says ok.
 */
async function startNodeProcess(
  name: string,
  service: string,
  { nodeArgs = [], ports }: { nodeArgs?: string[]; ports: { api: number; internal: number } },
): Promise<void> {
  startDetached(config.run, config.logs, {
    name,
    command: process.execPath,
    args: [...nodeArgs, '--enable-source-maps', join(REPO_ROOT, 'apps', service, 'dist', 'src', 'main.js')],
    ports: [ports.api, ports.internal],
    env: {
      ...process.env,
      ...serviceEnv(config, service),
      PORT: String(ports.api),
      INTERNAL_PORT: String(ports.internal),
    },
  });
  await waitFor(`${name} /health/ready`, () => readyOn(ports.internal).catch(() => false), {
    timeoutMs: 180_000,
    intervalMs: 250,
  });
}

/** The previous results of this output file, kept for the scenarios this run does not repeat. */
function previous(out: string): Record<string, unknown> {
  const file = join(RESULTS, `${out}.json`);
  if (!existsSync(file)) return {};
  const {
    name: _name,
    at: _at,
    rows: _rows,
    ...rest
  } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return rest;
}

async function main(): Promise<void> {
  if (!args['no-up']) await up({ log });
  const out = String(args.out);
  const profileDir = args['cpu-prof'] ? join(RESULTS, 'profiles', out) : null;
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
    await restartNodeServices(profileDir);
  }
  const loadBefore = sample({}).loadavg;
  let result: { rows: Record<string, unknown>[]; meta: Record<string, unknown> };
  try {
    if (args.idle !== undefined) result = await idleRun(num('idle'));
    else if (args.flash !== undefined) result = await flashRun(num('flash'));
    else if (args.http !== undefined) result = await httpPathRun(num('http'));
    else result = await loadRun();
  } finally {
    if (profileDir) {
      await restartNodeServices(null);
      log(`profiles in ${profileDir}`);
    }
  }
  report(out, result.rows, {
    ...previous(out),
    ...result.meta,
    loadavg: { before: loadBefore, after: sample({}).loadavg },
    cores: (await import('node:os')).availableParallelism(),
    args,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
