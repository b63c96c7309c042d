import { StackConfig } from './config';
import { describeHolders, ownedPid, portFree, portHolders, stackProcesses, writeRecord } from './ownership';
import { SERVICES } from './topology';

/** The infrastructure parts, in start order; the services follow them. */
export const INFRA_PARTS = ['postgres', 'redis', 'kafka', 'connect'] as const;

/** A part of the stack: infrastructure or one of the services. */
export type PartName = (typeof INFRA_PARTS)[number] | (typeof SERVICES)[number]['name'];

/** Every part, in start order (stopping goes the other way). */
export const ALL_PARTS: readonly PartName[] = [...INFRA_PARTS, ...SERVICES.map((s) => s.name)];

/** A port a part listens on and the variable that moves it. */
export interface PartPort {
  port: number;
  env: string;
}

/** The ports of a part, as configured. */
export function partPorts(config: StackConfig, part: PartName): PartPort[] {
  switch (part) {
    case 'postgres':
      return [{ port: config.pg.port, env: 'PG_PORT' }];
    case 'redis':
      return [{ port: config.redis.port, env: 'REDIS_PORT' }];
    case 'kafka':
      return [
        { port: config.kafka.port, env: 'KAFKA_PORT' },
        { port: config.kafka.controllerPort, env: 'KAFKA_CONTROLLER_PORT' },
        { port: config.kafka.link.port, env: 'KAFKA_PORT' },
      ];
    case 'connect':
      return [{ port: config.connect.port, env: 'CONNECT_PORT' }];
    default: {
      const svc = SERVICES.find((s) => s.name === part);
      if (!svc) throw new Error(`unknown part ${part}`);
      return [
        { port: config.servicePorts[part], env: svc.portEnv },
        // /metrics and /health/* (INTERNAL_PORT): the app port + 6000, moved with it.
        { port: config.internalPorts[part], env: svc.portEnv },
      ];
    }
  }
}

/** Ports held by something that is not this checkout's stack: one line per port; nothing was started. */
export class PortConflict extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/** How a part stands before `up` touches it. */
export type PartState = 'ours' | 'free';

/**
 * Whether a part is this checkout's and running ('ours'), or not running with all its ports free ('free');
 * throws PortConflict naming every port of it held by anything else. A process of this checkout found on the
 * port without a valid record (a stale pid file) is recorded again and counts as ours.
 */
export async function partState(config: StackConfig, part: PartName): Promise<PartState> {
  if (ownedPid(config.run, part) !== undefined) return 'ours';
  const ports = partPorts(config, part);
  const ours = new Set(stackProcesses(config.dir, part).map((p) => p.pid));
  const lines: string[] = [];
  for (const { port, env } of ports) {
    const mine = portHolders(port).find((h) => ours.has(h.pid));
    if (mine) {
      writeRecord(
        config.run,
        part,
        mine.pid,
        ports.map((p) => p.port),
      );
      return 'ours';
    }
    if (!(await portFree(port)))
      lines.push(
        `port ${port} (${part}) is held by ${describeHolders(port)}, not by this checkout's stack: ` +
          `set ${env} (or STACK_PORT_OFFSET, which moves every port) to use another`,
      );
  }
  if (lines.length) throw new PortConflict(lines);
  return 'free';
}

/** Checks every given part before anything starts; throws one PortConflict listing every held port. */
export async function checkParts(
  config: StackConfig,
  parts: readonly PartName[],
): Promise<Map<PartName, PartState>> {
  const states = new Map<PartName, PartState>();
  const lines: string[] = [];
  for (const part of parts) {
    try {
      states.set(part, await partState(config, part));
    } catch (error) {
      if (!(error instanceof PortConflict)) throw error;
      lines.push(...error.lines);
    }
  }
  if (lines.length) throw new PortConflict(lines);
  return states;
}

/** A part that did not become healthy: `up` stops what it started and shows this part's log tail. */
export class PartFailed extends Error {
  constructor(
    readonly part: string,
    readonly reason: unknown,
  ) {
    super(`${part} did not start: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}
