import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { StackConfig } from './config';
import { partState } from './parts';
import { startDetached, stopManaged, waitHealthy } from './processes';
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

/** Starts redis-server on the stack's port unless this checkout's is running; returns whether it started it. */
export async function startRedis(config: StackConfig): Promise<boolean> {
  const ping = () => redisPing(config.redis.port);
  if ((await partState(config, 'redis')) === 'ours') {
    await waitFor('Redis PING', ping, { timeoutMs: 20_000, intervalMs: 100 });
    return false;
  }
  const dir = join(config.dir, 'redis');
  mkdirSync(dir, { recursive: true });
  const pid = startDetached(config.run, config.logs, {
    name: 'redis',
    command: 'redis-server',
    args: ['--port', String(config.redis.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    ports: [config.redis.port],
    // Its working folder, not --dir: redis rewrites its command line, the folder stays readable in /proc.
    cwd: dir,
  });
  await waitHealthy('Redis PING', pid, ping, { timeoutMs: 20_000, intervalMs: 100 });
  return true;
}

export const stopRedis = (config: StackConfig) => stopManaged(config.run, 'redis', 10_000);
