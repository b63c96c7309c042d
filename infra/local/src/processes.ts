import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  STACK_ID_ENV,
  STACK_PART_ENV,
  checkoutId,
  ownedPid,
  removeRecord,
  stackProcesses,
  writeRecord,
} from './ownership';
import { waitFor } from './wait';

/** A background process of the stack, recorded in run/<name>.json so `down` and a later `up` can find it. */
export interface Managed {
  name: string;
  command: string;
  args: string[];
  /** The ports it serves, recorded with it. */
  ports: number[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
}

/** Whether a pid is alive (signal 0 probes without killing). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a managed process when it is alive and this checkout's (see ownedPid). */
export function runningPid(runDir: string, name: string): number | undefined {
  return ownedPid(runDir, name);
}

/** The environment marks that make a process this checkout's `name` part. */
export function stackEnv(runDir: string, name: string): Record<string, string> {
  return { [STACK_ID_ENV]: checkoutId(dirname(runDir)), [STACK_PART_ENV]: name };
}

/** Starts a detached process with stdout and stderr appended to logs/<name>.log, records it; returns its pid. */
export function startDetached(runDir: string, logDir: string, proc: Managed): number {
  mkdirSync(runDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const log = openSync(join(logDir, `${proc.name}.log`), 'a');
  const child = spawn(proc.command, proc.args, {
    cwd: proc.cwd,
    env: { ...(proc.env ?? process.env), ...stackEnv(runDir, proc.name) },
    detached: true,
    stdio: ['ignore', log, log],
    uid: proc.uid,
    gid: proc.gid,
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${proc.name} (${proc.command})`);
  child.unref();
  writeRecord(runDir, proc.name, child.pid, proc.ports, {}, [proc.command, ...proc.args].join(' '));
  return child.pid;
}

/** Signals a pid's group, waits for it to exit, then SIGKILLs the group when it outlives the timeout. */
export async function terminate(pid: number, what: string, timeoutMs: number): Promise<void> {
  signalGroup(pid, 'SIGTERM');
  try {
    await waitFor(`${what} to exit`, async () => !isAlive(pid), { timeoutMs, intervalMs: 100 });
  } catch {
    signalGroup(pid, 'SIGKILL');
    await waitFor(`${what} to die`, async () => !isAlive(pid), { timeoutMs: 5_000, intervalMs: 100 });
  }
}

/**
 * Stops a managed process of this checkout: the recorded one when it is still ours, and any other live process
 * started as this part of this checkout (a stale or overwritten record); never a process that is not ours.
 */
export async function stopManaged(runDir: string, name: string, timeoutMs = 30_000): Promise<boolean> {
  const pid = ownedPid(runDir, name);
  const strays = stackProcesses(dirname(runDir), name)
    .map((p) => p.pid)
    .filter((p) => p !== pid);
  removeRecord(runDir, name);
  rmSync(join(runDir, `${name}.pid`), { force: true });
  const pids = [...(pid === undefined ? [] : [pid]), ...strays];
  await Promise.all(pids.map((p) => terminate(p, name, timeoutMs)));
  return pids.length > 0;
}

/** Signals the whole process group (detached children lead their own group), falling back to the pid. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** Whether an executable is on the PATH. */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$0"', command], { stdio: 'ignore' }).status === 0;
}

/** Options of a command run to completion. */
export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/** Runs a command to completion, throwing with its output when it fails (blocks: for quick commands only). */
export function run(command: string, args: string[], options: RunOptions = {}): string {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.trim(),
    );
  }
  return result.stdout;
}

/** Commands of `runAsync` still running: an interrupted `up` kills them before stopping the parts. */
const transient = new Set<ChildProcess>();

/**
 * Runs a command to completion without blocking the event loop (signals are handled meanwhile), in its own
 * process group so that only the stack decides when it stops; throws with its output when it fails.
 */
export function runAsync(command: string, args: string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    transient.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (error) => {
      transient.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      transient.delete(child);
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `${command} ${args.join(' ')} exited ${code ?? signal}:\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`.trim(),
          ),
        );
    });
  });
}

/** Kills every command `runAsync` is still waiting for (their whole groups). */
export function killTransient(): void {
  for (const child of transient) if (child.pid) signalGroup(child.pid, 'SIGKILL');
}

/**
 * Waits for a started process to become healthy, failing at once when it exits (its log says why) instead of
 * polling a dead process until the deadline.
 */
export async function waitHealthy(
  what: string,
  pid: number,
  probe: () => Promise<boolean>,
  { timeoutMs, intervalMs = 250 }: { timeoutMs: number; intervalMs?: number },
): Promise<void> {
  let exited = false;
  await waitFor(
    what,
    async () => {
      if (!isAlive(pid)) {
        exited = true;
        return true;
      }
      return probe();
    },
    { timeoutMs, intervalMs },
  );
  if (exited) throw new Error(`${what}: the process (pid ${pid}) exited`);
}
