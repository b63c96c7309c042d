import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, StackConfig, serviceEnv, waitFor } from '@checkout/local-stack';

/** A TCP port of 127.0.0.1 nobody listens on right now (the OS picks it). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });

/** One extra process of a service, next to the stack's own, with its own ports and output. */
export interface ServiceProcess {
  /** The public port's base URL. */
  readonly url: string;
  /** The internal port's base URL (/health, /metrics). */
  readonly internalUrl: string;
  readonly child: ChildProcess;
  /** The exit code (null after a signal), once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Waits until its output matches `pattern`; fails at the deadline or when the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Waits until GET /health/ready answers 200; returns the report. */
  ready(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Sends a signal (SIGTERM by default) and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `apps/<service>/dist/src/main.js` as a child of the test with the stack's environment for that service,
 * fresh ports and `overrides` (a dead broker, a scratch database, a PSP behind a fault proxy). The stack's own
 * process of the service keeps running; the caller stops this one.
 */
export async function startServiceProcess(
  config: StackConfig,
  service: string,
  overrides: Record<string, string> = {},
): Promise<ServiceProcess> {
  const [port, internalPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', join(REPO_ROOT, 'apps', service, 'dist', 'src', 'main.js')],
    {
      env: {
        ...process.env,
        ...serviceEnv(config, service),
        PORT: String(port),
        INTERNAL_PORT: String(internalPort),
        // Traces of this process stay out of the stack's trace file.
        OTEL_TRACES_EXPORTER: 'none',
        ...overrides,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (c) => {
      code = c;
      resolve(c);
    }),
  );
  /** `wait`, or a failure with the process's last output as soon as it exits first. */
  const unlessExited = <T>(what: string, wait: Promise<T>): Promise<T> =>
    Promise.race([
      wait,
      exited.then((c) => {
        throw new Error(`${service} exited (${c}) before ${what}:\n${text.slice(-3000)}`);
      }),
    ]);
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  return {
    url: `http://127.0.0.1:${port}`,
    internalUrl,
    child,
    exited,
    output: () => text,
    async waitForOutput(pattern, timeoutMs = 60_000) {
      if (pattern.test(text)) return;
      const what = `${service} to log ${pattern}`;
      await unlessExited(
        what,
        waitFor(what, async () => pattern.test(text), { timeoutMs, intervalMs: 50 }),
      );
    },
    async ready(timeoutMs = 120_000) {
      const what = `${service} /health/ready`;
      return unlessExited(
        what,
        waitFor(
          what,
          async () => {
            if (code !== undefined) return undefined;
            const res = await fetch(`${internalUrl}/health/ready`).catch(() => undefined);
            return res?.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
          },
          { timeoutMs, intervalMs: 250 },
        ),
      );
    },
    async stop(signal = 'SIGTERM') {
      if (code === undefined) child.kill(signal);
      return exited;
    },
  };
}
