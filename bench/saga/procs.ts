import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICES, StackConfig, pgDataDir, runningPid } from '@checkout/local-stack';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/** The Node services of the stack (each one process), in the order of the tables. */
export const NODE_SERVICES = SERVICES.map((s) => s.name);

/** Every named process of the stack: the services, Kafka, Connect, Redis, and PostgreSQL's postmaster. */
export const STACK_PROCESSES = [...NODE_SERVICES, 'kafka', 'connect', 'redis', 'postgres'] as const;

interface Stat {
  /** CPU ms of the process itself (all threads). */
  selfMs: number;
  /** CPU ms of its children that exited and were waited for. */
  reapedMs: number;
  rssMb: number;
  ppid: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const tick = (i: number) => (Number(f[i]) * 1000) / TICKS_PER_SECOND;
  const pageKb = 4;
  return {
    ppid: Number(f[1]),
    selfMs: tick(11) + tick(12),
    reapedMs: tick(13) + tick(14),
    rssMb: (Number(f[21]) * pageKb) / 1024,
  };
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (Number.isInteger(child) && readStat(child)?.ppid === pid) out.push(child);
  }
  return out;
}

function postmasterPid(config: StackConfig): number | undefined {
  const file = join(pgDataDir(config), 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The pid of each running process of the stack. */
export function stackPids(config: StackConfig): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const name of STACK_PROCESSES) {
    const pid = name === 'postgres' ? postmasterPid(config) : runningPid(config.run, name);
    if (pid !== undefined) pids[name] = pid;
  }
  return pids;
}

/** One reading of the stack's processes: cumulative CPU ms and current RSS per named process. */
export interface Sample {
  at: number;
  cpuMs: Record<string, number>;
  /** Resident memory per process (PostgreSQL: the postmaster only, its backends share its buffers). */
  rssMb: Record<string, number>;
  /** The machine's /proc/loadavg at that moment (1, 5, 15 minutes). */
  loadavg: number[];
  /** Busy and total CPU ms of the whole machine (/proc/stat), for the share of the machine the stack used. */
  machine: { busyMs: number; totalMs: number };
}

function machineTimes(): { busyMs: number; totalMs: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = cpu[3] + cpu[4];
  return { busyMs: ((total - idle) * 1000) / TICKS_PER_SECOND, totalMs: (total * 1000) / TICKS_PER_SECOND };
}

/**
 * Reads every process of the stack. PostgreSQL is the postmaster plus all its children: the live backends'
 * own CPU and, through the postmaster's reaped-children times, the CPU of the backends that exited. A Java
 * process's threads (GC, JIT, network) are all in its one /proc/<pid>/stat.
 */
export function sample(pids: Record<string, number>): Sample {
  const cpuMs: Record<string, number> = {};
  const rssMb: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const stat = readStat(pid);
    if (!stat) continue;
    cpuMs[name] = stat.selfMs;
    rssMb[name] = stat.rssMb;
    if (name === 'postgres') {
      cpuMs[name] += stat.reapedMs;
      for (const child of childrenOf(pid)) {
        const c = readStat(child);
        if (!c) continue;
        cpuMs[name] += c.selfMs;
      }
    }
  }
  const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  return { at: performance.now(), cpuMs, rssMb, loadavg, machine: machineTimes() };
}

/** A JVM thread of HotSpot's JIT: `C1 CompilerThread0`, `C2 CompilerThread1`, ... (the name is cut to 15 characters). */
const JIT_THREAD = /^C[12] CompilerThre/;

/**
 * CPU ms the JIT compiler threads of a Java process have used: how much of its CPU is still compiling hot code
 * rather than running it. A JVM just started (Kafka, Connect) spends minutes of load on it: on this stack,
 * 18-22 s of CPU each over their first 5 minutes, a third of all they used (s44). 0 when the process is gone.
 */
function jitCpuMs(pid: number): number {
  let ms = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    if (!JIT_THREAD.test(comm)) continue;
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    ms += ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND;
  }
  return ms;
}

/** The Java processes of the stack. */
export const JVMS = ['kafka', 'connect'] as const;

/** Cumulative JIT compiler CPU ms of each JVM of the stack (0 for one not running). */
export function jvmJitMs(pids: Record<string, number>): Record<(typeof JVMS)[number], number> {
  return {
    kafka: pids.kafka === undefined ? 0 : jitCpuMs(pids.kafka),
    connect: pids.connect === undefined ? 0 : jitCpuMs(pids.connect),
  };
}

/** CPU ms each process used between two samples (and `total` over all of them). */
export function cpuBetween(a: Sample, b: Sample): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const name of Object.keys(b.cpuMs)) {
    const ms = b.cpuMs[name] - (a.cpuMs[name] ?? b.cpuMs[name]);
    out[name] = ms;
    total += ms;
  }
  out.total = total;
  return out;
}
