import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { StackConfig } from './config';
import { runningPid, startDetached, stopManaged } from './processes';
import { waitFor } from './wait';

/** PING over a raw socket: no client library needed to know Redis is up. */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Starts the machine's redis-server on the stack's port (in the foreground of its own detached process). */
export async function startRedis(config: StackConfig): Promise<void> {
  if (await redisPing(config.redis.port)) return;
  const dir = join(config.dir, 'redis');
  mkdirSync(dir, { recursive: true });
  if (!runningPid(config.run, 'redis')) {
    startDetached(config.run, config.logs, {
      name: 'redis',
      command: 'redis-server',
      args: [
        '--port',
        String(config.redis.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
    });
  }
  await waitFor('Redis PING', () => redisPing(config.redis.port), { timeoutMs: 20_000, intervalMs: 100 });
}

export const stopRedis = (config: StackConfig) => stopManaged(config.run, 'redis', 10_000);
