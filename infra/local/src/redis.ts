import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { StackConfig } from './config';
import { partState } from './parts';
import { startDetached, stopManaged, waitHealthy } from './processes';
import { waitFor } from './wait';

/**
 * PING over a raw socket: no client library needed to know Redis is up. With a password, AUTH goes first
 * (a Redis with `requirepass` answers an unauthenticated PING with NOAUTH, an error; so does a wrong one).
 */
export function redisPing(port: number, password?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let replies = '';
    socket.setTimeout(1000);
    socket.once('connect', () =>
      socket.write(password === undefined ? 'PING\r\n' : `${resp(['AUTH', password])}PING\r\n`),
    );
    socket.on('data', (data) => {
      replies += data.toString();
      if (replies.startsWith('-') || replies.includes('\r\n-') || replies.includes('+PONG')) {
        socket.destroy();
        resolve(!replies.startsWith('-') && !replies.includes('\r\n-'));
      }
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** A command in RESP, so that a password with spaces or quotes is sent as one argument. */
const resp = (args: string[]): string =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/** Starts redis-server on the stack's port unless this checkout's is running; returns whether it started it. */
export async function startRedis(config: StackConfig): Promise<boolean> {
  const password = config.auth?.redisPassword;
  const ping = () => redisPing(config.redis.port, password);
  if ((await partState(config, 'redis')) === 'ours') {
    await waitFor('Redis PING', ping, { timeoutMs: 20_000, intervalMs: 100 });
    return false;
  }
  const dir = join(config.dir, 'redis');
  mkdirSync(dir, { recursive: true });
  // requirepass goes in a config file: on the command line it would show in `ps`.
  const conf = join(dir, 'redis.conf');
  writeFileSync(conf, password ? `requirepass "${password.replace(/["\\]/g, '\\$&')}"\n` : '', {
    mode: 0o600,
  });
  const pid = startDetached(config.run, config.logs, {
    name: 'redis',
    command: 'redis-server',
    args: [
      conf,
      '--port',
      String(config.redis.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      // Redis' background cron (active key expiry, client timeouts) runs hz times a second: 10 by default, 0.25%
      // of a core at rest here. Once a second is plenty for this stack; an expired key is never served either way.
      '--hz',
      '1',
    ],
    ports: [config.redis.port],
    // Its working folder, not --dir: redis rewrites its command line, the folder stays readable in /proc.
    cwd: dir,
  });
  await waitHealthy('Redis PING', pid, ping, { timeoutMs: 20_000, intervalMs: 100 });
  return true;
}

export const stopRedis = (config: StackConfig) => stopManaged(config.run, 'redis', 10_000);
