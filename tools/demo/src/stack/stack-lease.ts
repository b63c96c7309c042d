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
interface StackPart {
  name: string;
  /** Whether it is up and answering. */
  running(config: StackConfig): Promise<boolean>;
  stop(config: StackConfig): Promise<unknown>;
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
const PARTS: StackPart[] = [
  { name: 'postgres', running: postgresAnswers, stop: stopPostgres },
  { name: 'redis', running: (c) => redisPing(c.redis.port).catch(() => false), stop: stopRedis },
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
 * The demo's hold on the local stack. A stack already running is reused as it is (no `up`, nothing touched);
 * otherwise `up` starts what is missing and the lease remembers exactly those parts, with their pids, so that
 * `release` stops only what the demo started (and not a process someone restarted in the meantime).
 */
export class StackLease {
  private constructor(
    private readonly config: StackConfig,
    /** Parts the demo started, with the pid they got (undefined for PostgreSQL, which has no pid file). */
    private readonly started: { part: StackPart; pid: number | undefined }[],
    readonly timings: UpTimings | null,
    readonly reused: string[],
  ) {}

  /** Parts found running before the demo, and parts started by it. */
  get startedNames(): string[] {
    return this.started.map((s) => s.part.name);
  }

  /** Reuses the running stack, or brings up what is missing and remembers it. */
  static async acquire(
    bringUp: (work: Promise<UpTimings>) => Promise<UpTimings> = (w) => w,
  ): Promise<StackLease> {
    const config = loadStackConfig();
    const before = await Promise.all(
      PARTS.map(async (part) => ({
        part,
        up: await part.running(config),
        pid: runningPid(config.run, part.name),
      })),
    );
    const reused = before.filter((b) => b.up).map((b) => b.part.name);
    const missing = before.filter((b) => !b.up);
    if (missing.length === 0) return new StackLease(config, [], null, reused);
    const timings = await bringUp(up({ log: () => undefined }));
    // A process that was alive but not ready yet (starting, say) was waited for, not started: not ours.
    const started = missing
      .map(({ part, pid }) => ({ part, pidBefore: pid, pid: runningPid(config.run, part.name) }))
      .filter((s) => s.pidBefore === undefined || s.pid !== s.pidBefore)
      .map(({ part, pid }) => ({ part, pid }));
    return new StackLease(config, started, timings, reused);
  }

  /** Stops what the demo started, newest first; leaves alone a part whose process is no longer the demo's. */
  async release(log: (line: string) => void): Promise<void> {
    for (const { part, pid } of [...this.started].reverse()) {
      if (pid !== undefined && runningPid(this.config.run, part.name) !== pid) {
        log(`${part.name} is no longer the process the demo started: left running`);
        continue;
      }
      await part.stop(this.config);
      log(`${part.name} stopped`);
    }
  }
}
