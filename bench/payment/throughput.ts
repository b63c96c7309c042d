import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadStackConfig, stackKafka, startService, stopService } from '@checkout/local-stack';
import { OutboxWriter } from '@checkout/messaging';
import { serviceDataSource } from '@checkout/testing';
import type { DataSource } from 'typeorm';
import { percentile, report } from '../report';
import { Sample, cpuBetween, jvmJitMs, sample, stackPids } from '../saga/procs';
import { DEV_PSP_CREDENTIALS } from '@checkout/service-kit';

/**
 * Charges per second through the payment service with the PSP simulator at a fixed latency, and the time from
 * PSP success to `payment.succeeded` on Kafka, against the simulator's own response time measured in the same
 * run as the floor.
 *
 * The shared simulator's knobs are left alone: every charge of the run gets a scripted delay-only fault for its
 * own reference (`POST /v1/_admin/faults {status: null, delayMs}`), so only this run's requests are slowed.
 * - floor: the simulator alone, `POST /v1/charges` from here at the service's charge concurrency (tok_decline:
 *   the same work for the PSP, and a declined charge is no orphan for the payment service to refund).
 * - service: `inventory.reserved` events committed through the inventory outbox (as the payment specs do), the
 *   payment service charges them (tok_success) and publishes `payment.succeeded`, read here from Kafka.
 * The floor is measured before and after the service phase (a shared machine drifts); the ratios use the mean.
 * Per phase, the CPU of every process of the stack per charge (/proc) and the share of the machine that was busy:
 * what says whether a ratio is bounded by the machine's two cores rather than by a wait.
 * The service phase's events are the bench's own: no order was placed and no stock reserved for them. Order,
 * inventory, fulfillment and the saga tracker would each spend CPU on them that a real saga would not cost
 * (order and inventory 3.6 and 5.0 ms a charge, parking them on their DLQs: s43/pay-latency-250), on the same
 * two cores as the payment service they are meant to measure. So by default they are stopped for the service
 * phase (the figure is the payment service's own, on the stack's PostgreSQL, Kafka, Connect and the simulator)
 * and started again after it, when they consume what they missed; `--with-consumers` keeps them running.
 * Side effects on the shared stack: the payment attempts stay in payment_svc, and inventory parks each
 * `payment.succeeded` of an order it never reserved on its DLQ, as it does for the payment specs.
 * Usage: node bench/dist/payment/throughput.js [charges, default 300] [PSP latency ms, default 50]
 *        [concurrency of the floor, default 32 = PAYMENT_CHARGE_CONCURRENCY's default] [--with-consumers]
 *        [--out name, default payment-throughput] [--warm-rounds N, default 10]
 */

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'with-consumers': { type: 'boolean', default: false },
    out: { type: 'string', default: 'payment-throughput' },
    'warm-rounds': { type: 'string', default: '10' },
  },
});
const positional = (i: number, fallback: number) => {
  const value = Number(positionals[i] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`argument ${i + 1} must be a positive integer`);
  return value;
};
const CHARGES = positional(0, 300);
const LATENCY_MS = positional(1, 50);
const CONCURRENCY = positional(2, 32);
const WARM_ROUNDS = Number(flags['warm-rounds']);
if (!Number.isInteger(WARM_ROUNDS) || WARM_ROUNDS < 0)
  throw new Error('--warm-rounds must be an integer >= 0');
/** The share of a core a JVM's JIT may use in a service phase (a few seconds) for the stack to count as warm. */
const JIT_QUIET_SHARE = 0.05;
/** The services that consume the bench's `inventory.reserved` or `payment.succeeded` besides payment. */
const OTHER_CONSUMERS = ['order', 'inventory', 'fulfillment', 'saga-tracker'];
// The dev tenant every service seeds (libs/service-kit DEV_TENANTS) and its PSP secret key (DEV_PSP_CREDENTIALS).
const TENANT = 'acme';
const PSP_SECRET_KEY = DEV_PSP_CREDENTIALS[0].secretKey;

const config = loadStackConfig();
const PSP = `http://127.0.0.1:${config.servicePorts['psp-simulator']}`;

async function pspJson<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${PSP}${path}`, init);
  if (!res.ok) throw new Error(`PSP ${init?.method ?? 'GET'} ${path} answered ${res.status}`);
  return (await res.json()) as T;
}

/** Slows the next charge of one reference by the run's latency, for this request only. */
const delayCharge = (reference: string) =>
  pspJson('/v1/_admin/faults', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reference, operation: 'charge', status: null, delayMs: LATENCY_MS, times: 1 }),
  });

/**
 * The floor: CHARGES direct charges at CONCURRENCY; each response time, the rate, and the CPU per charge of the
 * charges alone (the faults that slow them are scripted before the first sample).
 */
async function simulatorAlone(
  pids: Record<string, number>,
): Promise<{ latencies: number[]; rate: number; cpu: ReturnType<typeof cpuPerCharge> }> {
  const references = Array.from({ length: CHARGES }, () => `bench-floor-${randomUUID()}`);
  for (const r of references) await delayCharge(r);
  const at = sample(pids);
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < references.length) {
        const reference = references[next++];
        const s = performance.now();
        const res = await fetch(`${PSP}/v1/charges`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${PSP_SECRET_KEY}`,
            'content-type': 'application/json',
            'idempotency-key': reference,
          },
          body: JSON.stringify({ amount: 1000, currency: 'VND', token: 'tok_decline', reference }),
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`direct charge answered ${res.status}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const rate = CHARGES / ((performance.now() - t0) / 1000);
  return { latencies, rate, cpu: cpuPerCharge(at, sample(pids)) };
}

/** CPU ms per charge of each process between two samples (`bench`: this process, the floor's client), and how busy the machine was. */
function cpuPerCharge(a: Sample, b: Sample) {
  const used = cpuBetween(a, b);
  const byProcess = Object.fromEntries(
    Object.entries(used).map(([name, ms]) => [name, Math.round((ms / CHARGES) * 100) / 100]),
  );
  const machineBusyPct =
    Math.round(((b.machine.busyMs - a.machine.busyMs) / (b.machine.totalMs - a.machine.totalMs)) * 1000) / 10;
  return { byProcess, machineBusyPct };
}

/** The other consumers this run stopped, started again after the service phase (or when the run fails). */
const stopped: string[] = [];
async function restartStopped(): Promise<void> {
  while (stopped.length) await startService(stopped.shift()!, console.log);
}

interface Seen {
  at: number;
  occurredAt: number;
}

/**
 * One service phase: CHARGES `inventory.reserved` events committed through the inventory outbox in batches of 25,
 * as fast as this process can (the service's pace is what is measured), then waited for on `payment.succeeded`.
 * Returns when each was committed, the sample taken before the first, and the JVMs' JIT CPU over the phase.
 */
async function serviceRound(
  label: string,
  inventory: DataSource,
  writer: OutboxWriter,
  seen: Map<string, Seen>,
  pids: Record<string, number>,
) {
  console.log(`${label}: ${CHARGES} inventory.reserved -> payment.succeeded`);
  const orders = Array.from({ length: CHARGES }, () => randomUUID());
  for (const orderId of orders) await delayCharge(orderId);
  const committed = new Map<string, number>();
  const jitAt = jvmJitMs(pids);
  const at = sample(pids);
  for (let i = 0; i < orders.length; i += 25) {
    const batch = orders.slice(i, i + 25);
    await inventory.transaction(async (tx) => {
      for (const orderId of batch)
        await writer.append(tx, {
          type: 'inventory.reserved',
          tenantId: TENANT,
          sagaId: orderId,
          payload: {
            orderId,
            lines: [{ sku: 'BENCH-PAY', quantity: 1 }],
            expiresAt: new Date(Date.now() + 600_000).toISOString(),
            customerId: 'bench',
            amount: 50_000,
            currency: 'VND',
            paymentToken: 'tok_success',
          },
        });
    });
    const now = Date.now();
    for (const orderId of batch) committed.set(orderId, now);
  }
  const doneBy = Date.now() + 120_000 + CHARGES * 100;
  while (orders.some((o) => !seen.has(o)) && Date.now() < doneBy)
    await new Promise((r) => setTimeout(r, 100));
  const serviceSeconds = (performance.now() - at.at) / 1000;
  const jitEnd = jvmJitMs(pids);
  const jitMs = { kafka: jitEnd.kafka - jitAt.kafka, connect: jitEnd.connect - jitAt.connect };
  const jvmsCompiling = Object.values(jitMs).some((ms) => ms > serviceSeconds * 1000 * JIT_QUIET_SHARE);
  console.log(`${label}: ${serviceSeconds.toFixed(1)} s, JIT CPU ms ${JSON.stringify(jitMs)}`);
  return { orders, committed, at, serviceSeconds, jitMs, jvmsCompiling };
}

async function main(): Promise<void> {
  const knobs = await pspJson<{ latencyMs: number; jitterMs: number; errorRate: number }>('/v1/_admin/knobs');
  if (knobs.latencyMs || knobs.jitterMs || knobs.errorRate)
    console.warn(
      `the shared simulator's knobs are not neutral (${JSON.stringify(knobs)}): figures include them`,
    );

  const seen = new Map<string, Seen>();
  const consumer = stackKafka(config, 'bench-payment').consumer({
    groupId: `bench-payment-${randomUUID()}`,
    maxWaitTimeInMs: 50,
  });
  await consumer.connect();
  // Only what is produced from now on: the topic holds every earlier run and spec.
  await consumer.subscribe({ topics: ['payment.succeeded'], fromBeginning: false });
  let assigned = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (assigned = true));
  await consumer.run({
    eachMessage: async ({ message }) => {
      const at = Date.now();
      const key = message.key?.toString();
      if (!key || seen.has(key)) return;
      const envelope = JSON.parse(message.value?.toString() ?? '{}') as { occurredAt?: string };
      seen.set(key, { at, occurredAt: Date.parse(envelope.occurredAt ?? '') });
    },
  });
  const deadline = Date.now() + 30_000;
  while (!assigned && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!assigned) throw new Error('the bench consumer did not join its group within 30 s');

  console.log(`floor: ${CHARGES} direct charges at ${LATENCY_MS} ms, concurrency ${CONCURRENCY}`);
  const pids: Record<string, number> = { ...stackPids(config), bench: process.pid };
  const floorBefore = await simulatorAlone(pids);

  if (!flags['with-consumers'])
    for (const name of OTHER_CONSUMERS) if (await stopService(name, console.log)) stopped.push(name);
  const inventory = await serviceDataSource('inventory_svc', 2);
  const writer = new OutboxWriter('inventory');
  const phase = (label: string) => serviceRound(label, inventory, writer, seen, pids);
  // Kafka and Connect compile their hot code for minutes after a start (bench:saga waits for it the same way): a
  // service phase run through that measures the JIT, not the pipeline. Rounds of the same charges, not measured,
  // until one leaves both JVMs' compilers under 5% of a core (--warm-rounds, default 10; 0: none).
  for (let r = 1; r <= WARM_ROUNDS; r++) {
    const warm = await phase(`warm-up round ${r} (not measured)`);
    if (!warm.jvmsCompiling) break;
  }
  const { orders, committed, at, serviceSeconds, jitMs, jvmsCompiling } = await phase('service');
  const serviceCpu = cpuPerCharge(at, sample(pids));
  if (jvmsCompiling)
    console.warn(
      `the JVMs were still compiling during the measured service phase (JIT CPU ms ${JSON.stringify(jitMs)} in ` +
        `${serviceSeconds.toFixed(1)} s): the figures are not a warm stack's`,
    );
  const firstCommit = Math.min(...committed.values());
  const missing = orders.filter((o) => !seen.has(o));
  if (missing.length) throw new Error(`${missing.length} orders never reached payment.succeeded`);
  await inventory.destroy();

  // When the PSP made each charge (it succeeds as it is created), from its own ledger.
  const created = new Map<string, number>();
  for (const orderId of orders) {
    const l = await pspJson<{ charges: { createdAt: string; status: string }[] }>(
      `/v1/_ledger?reference=${orderId}`,
    );
    if (l.charges.length !== 1 || l.charges[0].status !== 'succeeded')
      throw new Error(`order ${orderId}: ${l.charges.length} charges at the PSP`);
    created.set(orderId, Date.parse(l.charges[0].createdAt));
  }

  // When the payment consumer recorded each attempt: splits the pipeline into consume and charge.
  const payment = await serviceDataSource('payment_svc', 1);
  const attempts: { order_id: string; created_at: Date }[] = await payment.query(
    `SELECT order_id, created_at FROM payment_attempt WHERE tenant_id = $1 AND order_id = ANY($2::uuid[])`,
    [TENANT, orders],
  );
  await payment.destroy();
  const recorded = new Map(attempts.map((a) => [a.order_id, a.created_at.getTime()]));

  const floorAfter = await simulatorAlone(pids);
  const floorCpu = [floorBefore.cpu, floorAfter.cpu];
  // After the floor's second half: what they missed would otherwise load it.
  await restartStopped();
  await consumer.disconnect();

  const floorLatencies = [...floorBefore.latencies, ...floorAfter.latencies];
  const floorRate = (floorBefore.rate + floorAfter.rate) / 2;
  const floorP50 = percentile(floorLatencies, 50);
  const of = (f: (o: string) => number) => orders.map(f);
  const endToEnd = of((o) => seen.get(o)!.at - committed.get(o)!);
  const toAttempt = of((o) => recorded.get(o)! - committed.get(o)!);
  const toCharge = of((o) => created.get(o)! - recorded.get(o)!);
  const pspToKafka = of((o) => seen.get(o)!.at - created.get(o)!);
  const pspToOutbox = of((o) => seen.get(o)!.occurredAt - created.get(o)!);
  const outboxToKafka = of((o) => seen.get(o)!.at - seen.get(o)!.occurredAt);
  const charged = [...created.values()];
  const chargeRate = CHARGES / ((Math.max(...charged) - Math.min(...charged)) / 1000);
  const recordedAt = [...recorded.values()];
  const recordRate = CHARGES / ((Math.max(...recordedAt) - Math.min(...recordedAt)) / 1000);
  const endRate = CHARGES / ((Math.max(...of((o) => seen.get(o)!.at)) - firstCommit) / 1000);

  const round = (n: number) => Math.round(n * 10) / 10;
  const row = (path: string, xs: number[] | null, rate: number | null) => ({
    path,
    n: xs?.length ?? CHARGES,
    'charges/s': rate === null ? 'n/a' : round(rate),
    'x floor rate': rate === null ? 'n/a' : round(rate / floorRate),
    'p50 ms': xs ? round(percentile(xs, 50)) : 'n/a',
    'p99 ms': xs ? round(percentile(xs, 99)) : 'n/a',
    'x floor p50': xs ? round(percentile(xs, 50) / floorP50) : 'n/a',
  });
  const rows = [
    row(
      `floor: simulator alone, POST /v1/charges at ${LATENCY_MS} ms (mean of before/after)`,
      floorLatencies,
      floorRate,
    ),
    row('service: attempts recorded by the inventory.reserved consumer, first to last', null, recordRate),
    row('service: charges made at the PSP, first to last', null, chargeRate),
    row('service: inventory.reserved committed -> payment.succeeded on Kafka', endToEnd, endRate),
    row('  of which committed -> attempt recorded (payment consumer)', toAttempt, null),
    row('  of which attempt recorded -> charge made at the PSP (worker + PSP)', toCharge, null),
    row('PSP success -> payment.succeeded on Kafka', pspToKafka, null),
    row('  of which PSP success -> outbox row (payment service)', pspToOutbox, null),
    row('  of which outbox row -> Kafka consumer (Debezium relay)', outboxToKafka, null),
  ];
  const cpuRows = Object.keys(serviceCpu.byProcess).map((name) => ({
    process: name,
    'floor cpu ms/charge': round((floorCpu[0].byProcess[name] + floorCpu[1].byProcess[name]) / 2),
    'service cpu ms/charge': round(serviceCpu.byProcess[name]),
  }));
  cpuRows.push({
    process: 'machine busy (% of 2 cores: 100 = both)',
    'floor cpu ms/charge': round((floorCpu[0].machineBusyPct + floorCpu[1].machineBusyPct) / 2),
    'service cpu ms/charge': round(serviceCpu.machineBusyPct),
  });
  console.table(cpuRows);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  report(flags.out!, rows, {
    charges: CHARGES,
    otherConsumers: flags['with-consumers'] ? 'running' : 'stopped for the service phase',
    pspLatencyMs: LATENCY_MS,
    floorConcurrency: CONCURRENCY,
    floorRates: { before: round(floorBefore.rate), after: round(floorAfter.rate) },
    cpuMsPerCharge: { floor: floorCpu, service: serviceCpu },
    serviceJitMs: jitMs,
    jvmsCompiling,
    sharedKnobs: knobs,
    loadavg: load,
  });
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(restartStopped);
