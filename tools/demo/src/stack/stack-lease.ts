import {
  SERVICES,
  StackConfig,
  UpTimings,
  loadStackConfig,
  redisPing,
  runningPid,
  serviceReady,
  stopConnect,
  stopKafka,
  stopPostgres,
  stopRedis,
  stopService,
  superClient,
  up,
} from '@checkout/local-stack';

/** A part of the local stack the demo may find running or start itself. */
export interface StackPart {
  name: string;
  /** Whether it is up and answering. */
  running(config: StackConfig): Promise<boolean>;
  stop(config: StackConfig): Promise<unknown>;
}

/** What the lease works with; the real stack by default, stand-ins in its spec. */
export interface StackDeps {
  config: StackConfig;
  parts: readonly StackPart[];
  up(): Promise<UpTimings>;
  pidOf(name: string): number | undefined;
}

const pidPart = (name: string, stop: (config: StackConfig) => Promise<unknown>): StackPart => ({
  name,
  running: async (config) => runningPid(config.run, name) !== undefined,
  stop,
});

async function postgresAnswers(config: StackConfig): Promise<boolean> {
  const client = superClient(config);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Start order; stopping goes the other way (services first, PostgreSQL last). */
export const STACK_PARTS: readonly StackPart[] = [
  { name: 'postgres', running: postgresAnswers, stop: stopPostgres },
  {
    name: 'redis',
    running: (c) => redisPing(c.redis.port, c.auth?.redisPassword).catch(() => false),
    stop: stopRedis,
  },
  pidPart('kafka', stopKafka),
  pidPart('connect', stopConnect),
  ...SERVICES.map((svc) => ({
    name: svc.name,
    running: async (config: StackConfig) =>
      runningPid(config.run, svc.name) !== undefined &&
      (await serviceReady(config, svc.name).catch(() => false)),
    stop: () => stopService(svc.name, () => undefined),
  })),
];

/**
 * The demo's hold on the local stack. A stack already running is reused as it is (no `up`) and never stopped;
 * a part missing from it is brought up by `up` and left running with the rest. When nothing was running, the
 * demo starts the whole stack, remembers each part with its pid, and `release` stops exactly those (and not a
 * process someone restarted in the meantime).
 */
export class StackLease {
  private constructor(
    private readonly deps: StackDeps,
    /** Parts the demo started, with the pid they got (undefined for PostgreSQL, which has no pid file). */
    private readonly started: { part: StackPart; pid: number | undefined }[],
    readonly timings: UpTimings | null,
    readonly reused: string[],
    /** Parts that were missing from a running stack: brought up, and left running with the rest. */
    readonly filledIn: string[] = [],
  ) {}

  /** Parts the demo started and will stop. */
  get startedNames(): string[] {
    return this.started.map((s) => s.part.name);
  }

  /** Reuses the running stack, or brings up what is missing; `bringUp` wraps the wait (a progress display). */
  static async acquire(
    bringUp: (work: Promise<UpTimings>) => Promise<UpTimings> = (w) => w,
    deps: StackDeps = realStack(),
  ): Promise<StackLease> {
    const before = await Promise.all(
      deps.parts.map(async (part) => ({ part, up: await part.running(deps.config) })),
    );
    const reused = before.filter((b) => b.up).map((b) => b.part.name);
    const missing = before.filter((b) => !b.up).map((b) => b.part);
    if (missing.length === 0) return new StackLease(deps, [], null, reused);
    const timings = await bringUp(deps.up());
    // Some of the stack was running: it is someone's stack, and a part missing from it is most likely being
    // restarted by its owner right now, so who started it again cannot be told. Fill in, stop nothing.
    if (reused.length > 0)
      return new StackLease(
        deps,
        [],
        timings,
        reused,
        missing.map((p) => p.name),
      );
    const started = missing.map((part) => ({ part, pid: deps.pidOf(part.name) }));
    return new StackLease(deps, started, timings, reused);
  }

  /** Stops what the demo started, newest first; leaves alone a part whose process is no longer the demo's. */
  async release(log: (line: string) => void): Promise<void> {
    for (const { part, pid } of [...this.started].reverse()) {
      if (pid !== undefined && this.deps.pidOf(part.name) !== pid) {
        log(`${part.name} is no longer the process the demo started: left running`);
        continue;
      }
      await part.stop(this.deps.config);
      log(`${part.name} stopped`);
    }
  }
}

/** The local stack of this checkout (.stack/), as `npm run up` runs it. */
function realStack(): StackDeps {
  const config = loadStackConfig();
  return {
    config,
    parts: STACK_PARTS,
    up: () => up({ log: () => undefined }),
    pidOf: (name) => runningPid(config.run, name),
  };
}
