import {
  OUTBOX_SERVICES,
  StackConfig,
  connectorDefinitions,
  connectorRunning,
  ensureJars,
  isAlive,
  ownedPid,
  signalGroup,
  startConnect,
  startKafka,
  startPostgres,
  startRedis,
  serviceReady,
  startServices,
  stopPostgres,
  waitFor,
} from '@checkout/local-stack';

/** A part of the local stack a fault can hit: a service, or a piece of infrastructure. */
export type ChaosPart =
  | 'order'
  | 'inventory'
  | 'payment'
  | 'fulfillment'
  | 'saga-tracker'
  | 'kafka'
  | 'connect'
  | 'postgres'
  | 'redis';

/** One fault: what it does to the stack, and how the stack is brought back. */
export interface Fault {
  /** What the tables call it, e.g. `SIGKILL payment`. */
  name: string;
  inject(): Promise<void>;
  /** Starts what the fault took away and returns once it is healthy again. */
  restore(): Promise<void>;
  /** Sets the stage before the first checkout (e.g. a service put behind a fault proxy). */
  prepare?(): Promise<void>;
  /** Undoes `prepare` once the case is judged (also when it failed half-way): the stack as it was. */
  dispose?(): Promise<void>;
}

/** SIGKILLs a part's whole process group (no drain, no offset commit) and waits until it is gone. */
export async function sigkill(config: StackConfig, part: ChaosPart): Promise<number> {
  const pid = ownedPid(config.run, part);
  if (pid === undefined) throw new Error(`${part} is not running in this checkout's stack (${config.dir})`);
  signalGroup(pid, 'SIGKILL');
  await waitFor(`${part} (pid ${pid}) to die`, async () => !isAlive(pid), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  return pid;
}

/** Starts a part again through infra/local, as `up` would, and waits until it answers. */
export async function restart(
  config: StackConfig,
  part: ChaosPart,
  log: (line: string) => void,
): Promise<void> {
  switch (part) {
    case 'kafka':
      await startKafka(config, ensureJars(config), log);
      return;
    case 'connect': {
      await startConnect(config, ensureJars(config));
      // The connectors are stored in Connect's config topic: the worker starts them again, from their offsets.
      const names = connectorDefinitions()
        .map((c) => c.name)
        .filter((n) => OUTBOX_SERVICES.some((s) => n.includes(s.name)));
      await waitFor(
        `connectors ${names.join(', ')} RUNNING`,
        async () => (await Promise.all(names.map((n) => connectorRunning(config, n)))).every(Boolean),
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      return;
    }
    case 'postgres':
      await startPostgres(config, log);
      return;
    case 'redis':
      await startRedis(config);
      return;
    default:
      try {
        await startServices(config, log, [part]);
      } catch (error) {
        // startServices gives a service 60 s to be ready; on a 2-core machine shared with other stacks a Nest
        // boot took longer (load average 57). The process it started keeps booting: give it more time.
        if (ownedPid(config.run, part) === undefined) throw error;
        log(`${part} not ready within startServices' deadline, still booting: waiting longer`);
        await waitFor(`${part} /health/ready`, () => serviceReady(config, part).catch(() => false), {
          timeoutMs: SLOW_BOOT_MS,
          intervalMs: 500,
        });
      }
  }
}

/** How much longer a service that is still booting may take once startServices gave up on it. */
const SLOW_BOOT_MS = 180_000;

/** SIGKILL of one or more parts at once, then a restart of each once `downMs` have passed. */
export function killFault(config: StackConfig, parts: ChaosPart[], log: (line: string) => void): Fault {
  return {
    name: `SIGKILL ${parts.join(' + ')}`,
    async inject() {
      const pids = await Promise.all(parts.map((p) => sigkill(config, p)));
      log(`killed ${parts.map((p, i) => `${p} (pid ${pids[i]})`).join(', ')}`);
    },
    async restore() {
      await Promise.all(parts.map((p) => restart(config, p, log)));
      log(`${parts.join(', ')} back`);
    },
  };
}

/** PostgreSQL stopped with `pg_ctl -m immediate` (no checkpoint: crash recovery on start), then started. */
export function postgresImmediateFault(config: StackConfig, log: (line: string) => void): Fault {
  return {
    name: 'PostgreSQL immediate shutdown',
    async inject() {
      await stopPostgres(config, 'immediate');
      log('PostgreSQL stopped (immediate)');
    },
    async restore() {
      await startPostgres(config, log);
      log('PostgreSQL back');
    },
  };
}
