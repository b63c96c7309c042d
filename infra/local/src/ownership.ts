import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, join, relative, sep } from 'node:path';

/** Environment variables every process of the stack is started with: which checkout and which part it is. */
export const STACK_ID_ENV = 'CHECKOUT_STACK_ID';
export const STACK_PART_ENV = 'CHECKOUT_STACK_PART';

/** This checkout's stack id, made once and kept in `<stack dir>/checkout-id`. */
export function checkoutId(stackDir: string): string {
  const file = join(stackDir, 'checkout-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(stackDir, { recursive: true });
  try {
    writeFileSync(file, `${randomUUID()}\n`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(file, 'utf8').trim();
}

/** What /proc says about a process: its start time (clock ticks since boot) and command, and whose stack it is. */
export interface ProcInfo {
  pid: number;
  startTime: string;
  command: string;
  stackId?: string;
  part?: string;
  cwd?: string;
}

const readQuiet = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** A live process as /proc shows it, or undefined when it is gone (or /proc is not there). */
export function procInfo(pid: number): ProcInfo | undefined {
  const stat = readQuiet(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // Fields after the command name in parentheses (which may hold spaces): state is field 3, starttime field 22.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z') return undefined;
  const command = (readQuiet(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean).join(' ');
  const env = new Map(
    (readQuiet(`/proc/${pid}/environ`) ?? '')
      .split('\0')
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
  );
  let cwd: string | undefined;
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    cwd = undefined;
  }
  return {
    pid,
    startTime: fields[19],
    command,
    stackId: env.get(STACK_ID_ENV),
    part: env.get(STACK_PART_ENV),
    cwd,
  };
}

/** The executable of a command line, without its folder. */
const executable = (command: string) => basename(command.split(' ')[0] ?? '');

/**
 * Whether a process is of the stack in stackDir: it carries the checkout's id in its environment or runs in a
 * folder of the stack (redis rewrites its command line over its environment; its working folder stays).
 */
function ofStack(info: ProcInfo, stackDir: string): { part?: string } | undefined {
  if (info.stackId !== undefined)
    return info.stackId === checkoutId(stackDir) ? { part: info.part } : undefined;
  if (!info.cwd || !info.cwd.startsWith(stackDir + sep)) return undefined;
  // Only a program the stack runs, in a part's own folder: a shell someone opened in .stack/ is not a part.
  const part = relative(stackDir, info.cwd).split(sep)[0];
  const runs = { redis: ['redis-server'], kafka: ['java'], connect: ['java'] }[part];
  return runs?.includes(executable(info.command)) ? { part } : undefined;
}

/** Every live process of the stack in stackDir (all parts, or one), with its part. */
export function stackProcesses(stackDir: string, part?: string): ProcInfo[] {
  if (!existsSync('/proc')) return [];
  const found: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const info = procInfo(Number(entry));
    const of = info && ofStack(info, stackDir);
    if (info && of && (!part || of.part === part)) found.push({ ...info, part: of.part });
  }
  return found;
}

/** The socket inodes listening on a TCP port, from /proc/net/tcp and tcp6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (readQuiet(table) ?? '').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue;
      if (parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** The processes holding a listening socket on the port (empty when none, or when their fds are not readable). */
export function portHolders(port: number): ProcInfo[] {
  const inodes = listeningInodes(port);
  if (inodes.size === 0 || !existsSync('/proc')) return [];
  const holders: ProcInfo[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        return target.startsWith('socket:[') && inodes.has(target.slice(8, -1));
      } catch {
        return false;
      }
    });
    const info = holds ? procInfo(Number(entry)) : undefined;
    if (info) holders.push(info);
  }
  return holders;
}

/** Whether nothing listens on the port: a bind on 127.0.0.1 succeeds and /proc lists no listener. */
export async function portFree(port: number): Promise<boolean> {
  if (listeningInodes(port).size > 0) return false;
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** What a part of the stack leaves in `<stack dir>/run/<part>.json`: the process it is and what it serves. */
export interface PartRecord {
  part: string;
  stackId: string;
  pid: number;
  startTime: string;
  command: string;
  ports: number[];
  /** Kafka: the cluster id its storage was formatted with. */
  kafkaClusterId?: string;
  /** PostgreSQL: its data folder. */
  pgDataDir?: string;
}

const recordFile = (runDir: string, part: string) => join(runDir, `${part}.json`);

/** Records that this checkout started a part as the given process (command: the line it was started with). */
export function writeRecord(
  runDir: string,
  part: string,
  pid: number,
  ports: number[],
  extra: Pick<PartRecord, 'kafkaClusterId' | 'pgDataDir'> = {},
  command?: string,
): PartRecord {
  const info = procInfo(pid);
  const record: PartRecord = {
    part,
    stackId: checkoutId(dirname(runDir)),
    pid,
    startTime: info?.startTime ?? '',
    command: command ?? info?.command ?? '',
    ports,
    ...extra,
  };
  mkdirSync(runDir, { recursive: true });
  writeFileSync(recordFile(runDir, part), JSON.stringify(record, null, 2));
  return record;
}

/** The record of a part, if there is one. */
export function readRecord(runDir: string, part: string): PartRecord | undefined {
  const text = readQuiet(recordFile(runDir, part));
  if (!text) return undefined;
  try {
    return JSON.parse(text) as PartRecord;
  } catch {
    return undefined;
  }
}

/** Forgets a part's record. */
export const removeRecord = (runDir: string, part: string) =>
  rmSync(recordFile(runDir, part), { force: true });

/**
 * The pid of a part only when it is this checkout's: recorded with this checkout's id, alive with the recorded
 * start time and executable, and marked as this checkout's (environment or working folder; a reused pid is not).
 */
export function ownedPid(runDir: string, part: string): number | undefined {
  const stackDir = dirname(runDir);
  const record = readRecord(runDir, part);
  if (!record || record.stackId !== checkoutId(stackDir)) return undefined;
  const info = procInfo(record.pid);
  if (!info || info.startTime !== record.startTime) return undefined;
  if (executable(info.command) !== executable(record.command)) return undefined;
  return ofStack(info, stackDir)?.part === part ? record.pid : undefined;
}

/** One holder of a port, as a person reads it: pid and command where readable. */
export function describeHolders(port: number): string {
  const holders = portHolders(port);
  if (holders.length === 0) return 'a process whose pid cannot be read';
  return holders
    .slice(0, 2)
    .map(
      (h) => `pid ${h.pid} (${h.command.length > 100 ? `${h.command.slice(0, 97)}...` : h.command || '?'})`,
    )
    .join(', ');
}
