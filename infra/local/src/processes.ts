import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait';

/** A background process of the stack, tracked by a pid file so `down` and a later `up` can find it. */
export interface Managed {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
}

const pidFile = (runDir: string, name: string) => join(runDir, `${name}.pid`);

/** Whether a pid is alive (signal 0 probes without killing). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid recorded for a managed process, if it is still alive. */
export function runningPid(runDir: string, name: string): number | undefined {
  const file = pidFile(runDir, name);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}

/** Starts a detached process with stdout and stderr appended to logs/<name>.log; returns its pid. */
export function startDetached(runDir: string, logDir: string, proc: Managed): number {
  mkdirSync(runDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const log = openSync(join(logDir, `${proc.name}.log`), 'a');
  const child = spawn(proc.command, proc.args, {
    cwd: proc.cwd,
    env: proc.env ?? process.env,
    detached: true,
    stdio: ['ignore', log, log],
    uid: proc.uid,
    gid: proc.gid,
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${proc.name} (${proc.command})`);
  child.unref();
  writeFileSync(pidFile(runDir, proc.name), String(child.pid));
  return child.pid;
}

/** Sends SIGTERM to a managed process group, waits for it to exit, then SIGKILLs what is left. */
export async function stopManaged(runDir: string, name: string, timeoutMs = 30_000): Promise<boolean> {
  const pid = runningPid(runDir, name);
  rmSyncQuiet(pidFile(runDir, name));
  if (pid === undefined) return false;
  signalGroup(pid, 'SIGTERM');
  try {
    await waitFor(`${name} to exit`, async () => !isAlive(pid), { timeoutMs, intervalMs: 100 });
  } catch {
    signalGroup(pid, 'SIGKILL');
    await waitFor(`${name} to die`, async () => !isAlive(pid), { timeoutMs: 5_000, intervalMs: 100 });
  }
  return true;
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

function rmSyncQuiet(path: string): void {
  rmSync(path, { force: true });
}

/** Whether an executable is on the PATH. */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Runs a command to completion, throwing with its output when it fails. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; uid?: number; gid?: number } = {},
): string {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.trim(),
    );
  }
  return result.stdout;
}
