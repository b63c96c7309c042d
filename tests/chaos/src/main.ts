import { parseArgs } from 'node:util';
import { SagaEvents } from '@checkout/e2e';
import { ALL_PARTS, bringUp, checkParts, loadStackConfig, stopParts } from '@checkout/local-stack';
import { ChaosContext, ChaosOptions, DEFAULT_OPTIONS } from './context';
import { sagaTopicReader } from './delivery-sources';
import { report } from './report';
import { SCENARIOS } from './scenarios';
import { CaseResult } from './verdict';

const USAGE = `usage: npm run chaos -- [--scenarios=app-kill,infra-kill,psp-storm,network-faults,soak] [--cases=order,kafka,...]
  [--soak [seconds]] (the soak alone, default ${DEFAULT_OPTIONS.soakMs / 1000} s, unless --scenarios names others too)
  [--orders=${DEFAULT_OPTIONS.orders}] [--rate=${DEFAULT_OPTIONS.rate}] [--down-seconds=${DEFAULT_OPTIONS.downMs / 1000}]
  [--settle-seconds=${DEFAULT_OPTIONS.settleMs / 1000}] [--soak-minutes=${DEFAULT_OPTIONS.soakMs / 60_000}] [--soak-rate=${DEFAULT_OPTIONS.soakRate}]
  [--soak-retention-seconds=${DEFAULT_OPTIONS.soakRetentionMs / 1000} (0: keep the stack's retention)]
scenarios: ${SCENARIOS.map((s) => `\n  ${s.name}: ${s.summary}`).join('')}`;

/** A positive number from a flag, or the default; anything else is a usage error. */
function positive(
  flags: Record<string, string | boolean | undefined>,
  name: string,
  fallback: number,
): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new UsageError(`--${name} must be a positive number, got ${raw}`);
  return value;
}

class UsageError extends Error {}

/** `--soak` with no number after it is `--soak=<default seconds>` (parseArgs has no optional values). */
function soakDefault(argv: string[]): string[] {
  return argv.map((arg, i) =>
    arg === '--soak' && (i === argv.length - 1 || argv[i + 1].startsWith('--'))
      ? `--soak=${DEFAULT_OPTIONS.soakMs / 1000}`
      : arg,
  );
}

/** The options and scenarios the command line asks for. */
export function parseFlags(argv: string[]): { options: ChaosOptions; scenarios: string[]; help: boolean } {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({
    args: soakDefault(argv),
    options: {
      scenarios: text,
      cases: text,
      orders: text,
      rate: text,
      'down-seconds': text,
      'settle-seconds': text,
      soak: text,
      'soak-minutes': text,
      'soak-rate': text,
      'soak-retention-seconds': text,
      help: { type: 'boolean' },
    },
    strict: true,
  });
  const list = (v: unknown) => (typeof v === 'string' && v ? v.split(',').map((s) => s.trim()) : []);
  if (values.soak !== undefined && values['soak-minutes'] !== undefined)
    throw new UsageError('--soak <seconds> and --soak-minutes say the same: give one');
  const scenarios = list(values.scenarios);
  if (values.soak !== undefined && !scenarios.includes('soak')) scenarios.push('soak');
  const unknown = scenarios.filter((s) => !SCENARIOS.some((x) => x.name === s));
  if (unknown.length) throw new UsageError(`unknown scenario ${unknown.join(', ')}`);
  const d = DEFAULT_OPTIONS;
  return {
    help: values.help === true,
    scenarios: scenarios.length ? scenarios : SCENARIOS.map((s) => s.name),
    options: {
      orders: Math.round(positive(values, 'orders', d.orders)),
      rate: positive(values, 'rate', d.rate),
      downMs: positive(values, 'down-seconds', d.downMs / 1000) * 1000,
      settleMs: positive(values, 'settle-seconds', d.settleMs / 1000) * 1000,
      soakMs:
        values.soak !== undefined
          ? positive(values, 'soak', d.soakMs / 1000) * 1000
          : positive(values, 'soak-minutes', d.soakMs / 60_000) * 60_000,
      soakRate: positive(values, 'soak-rate', d.soakRate),
      soakRetentionMs:
        values['soak-retention-seconds'] === '0'
          ? 0
          : positive(values, 'soak-retention-seconds', d.soakRetentionMs / 1000) * 1000,
      cases: list(values.cases),
    },
  };
}

/** `npm run chaos`: brings the local stack up (reusing this checkout's), runs the scenarios, stops what it started. */
async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseFlags>;
  try {
    parsed = parseFlags(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    console.log(USAGE);
    return;
  }
  const log = (line: string) => console.log(`[chaos] ${line}`);
  const config = loadStackConfig();
  // A stack already whole is used as it is (bringUp would run every migration again); else up starts the rest.
  const whole = [...(await checkParts(config, ALL_PARTS)).values()].every((s) => s === 'ours');
  const { started } = whole ? { started: [] } : await bringUp({ log: (line) => log(`stack: ${line}`) });
  const reader = await sagaTopicReader().start();
  const ctx: ChaosContext = {
    config,
    reader,
    events: new SagaEvents(),
    options: parsed.options,
    log,
  };
  const failed: string[] = [];
  try {
    for (const name of parsed.scenarios) {
      const scenario = SCENARIOS.find((s) => s.name === name)!;
      log(`scenario ${scenario.name}: ${scenario.summary}`);
      const t = Date.now();
      let results: CaseResult[];
      try {
        results = await scenario.run(ctx);
      } catch (error) {
        log(`scenario ${name} could not run: ${(error as Error).stack ?? String(error)}`);
        failed.push(`${name} (did not run to the end)`);
        continue;
      }
      report(name, results, { options: parsed.options, wallMs: Date.now() - t });
      failed.push(...results.filter((r) => !r.ok).map((r) => `${name}/${r.case}`));
    }
  } finally {
    await reader.stop();
    if (started.length) await stopParts(started, (line) => log(`stack: ${line}`));
  }
  if (failed.length) {
    log(`FAILED: ${failed.join(', ')}`);
    process.exitCode = 1;
  } else log('every case held every invariant');
}

if (require.main === module)
  main().catch((error: unknown) => {
    console.error(`[chaos] ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  });
