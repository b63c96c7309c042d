import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DemoApi } from './http/demo-api';
import { PaidWatch } from './kafka/paid-watch';
import { SagaHints } from './kafka/saga-hints';
import { DemoOptions, runReplays } from './demo';
import { ReplayContext } from './replays/checkout-wave';
import { replayPassed } from './replays/replay-report';
import { formatLatency, formatReport } from './report/report';
import { formatMs } from './report/stats';
import { StackLease } from './stack/stack-lease';
import { MissingPrerequisite, PortConflict, UpFailed } from '@checkout/local-stack';

const USAGE = `npm run demo [-- --units 500 --buyers 540 --timeouts 20 --deadline 600]
  --units      stock of each flash-sale SKU (default 500)
  --buyers     concurrent buyers per flash sale (default 540)
  --timeouts   checkouts in the PSP-timeout replay (default 20)
  --deadline   seconds the sagas of one replay may take before they are reported stuck (default 600)`;

function options(argv: string[]): DemoOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      units: { type: 'string', default: '500' },
      buyers: { type: 'string', default: '540' },
      timeouts: { type: 'string', default: '20' },
      deadline: { type: 'string', default: '600' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name: string, raw: string, min: number) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be an integer >= ${min}, got ${raw}\n${USAGE}`);
    return n;
  };
  return {
    units: int('units', values.units, 1),
    buyers: int('buyers', values.buyers, 1),
    timeouts: int('timeouts', values.timeouts, 1),
    deadlineMs: int('deadline', values.deadline, 1) * 1_000,
  };
}

/** Prints a dot every second while a long step runs, so a person sees it is alive. */
async function withDots<T>(label: string, work: Promise<T>): Promise<T> {
  process.stdout.write(`${label} `);
  const timer = setInterval(() => process.stdout.write('.'), 1000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    process.stdout.write('\n');
  }
}

async function main(): Promise<number> {
  const opts = options(process.argv.slice(2));
  const started = Date.now();
  console.log("checkout-saga demo: the seed's two incidents replayed against the real system\n");
  const lease = await StackLease.acquire((work) =>
    withDots(
      'starting what is not running (PostgreSQL, Redis, Kafka, Connect + Debezium, the services)',
      work,
    ),
  );
  if (!lease.timings) console.log(`reusing the running stack (${lease.reused.join(', ')}); it stays running`);
  else if (lease.filledIn.length)
    console.log(
      `the running stack lacked ${lease.filledIn.join(', ')}: brought up in ${formatMs(lease.timings.total)}; ` +
        "the stack is not the demo's, so all of it stays running",
    );
  else console.log(`stack up in ${formatMs(lease.timings.total)}; the demo stops it when it ends`);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    if (lease.startedNames.length)
      await withDots(
        `stopping what the demo started (${lease.startedNames.join(', ')})`,
        lease.release(console.log),
      );
  };
  // Ctrl-C or SIGTERM: what the demo started is stopped before it exits (during `up`, up itself does that).
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      console.log(`\ninterrupted (${signal})`);
      void release().finally(() => process.exit(code));
    });
  }

  const paid = new PaidWatch();
  const hints = new SagaHints();
  try {
    await Promise.all([paid.start(), hints.start()]);
    const ctx: ReplayContext = {
      api: new DemoApi(),
      paid,
      hints,
      runId: randomBytes(3).toString('hex'),
      deadlineMs: opts.deadlineMs,
      log: (line) => console.log(line),
    };
    console.log('');
    const reports = await runReplays(ctx, opts);
    console.log(`\n${formatReport(reports)}`);
    if (paid.invalid.length) console.log(`invalid order.paid events: ${paid.invalid.slice(0, 3).join('; ')}`);
    const latencies = reports.flatMap((r) => r.result.paidLatencyMs);
    console.log(
      `\ndemo wall time ${formatMs(Date.now() - started)}; checkout accepted -> order.paid on Kafka over all replays: ${formatLatency(latencies)}`,
    );
    return reports.every(replayPassed) && paid.invalid.length === 0 ? 0 : 1;
  } finally {
    await Promise.all([paid.stop(), hints.stop()]);
    await release();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // The stack's own failures are said in its words (which port, which part and its log); others with a trace.
    const known =
      error instanceof PortConflict || error instanceof UpFailed || error instanceof MissingPrerequisite;
    console.error(`demo failed: ${known ? (error as Error).message : ((error as Error).stack ?? error)}`);
    process.exitCode = 1;
  },
);
