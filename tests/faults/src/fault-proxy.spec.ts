import { afterEach, beforeEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';
import { waitFor } from '@checkout/local-stack';
import { FaultProxy } from './fault-proxy';

/** A client connection through the proxy that collects what the echo server sends back. */
async function connect(port: number) {
  const socket = createConnection({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const got: Buffer[] = [];
  let error: NodeJS.ErrnoException | undefined;
  let closed = false;
  socket.on('data', (c: Buffer) => got.push(c));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e));
  socket.on('close', () => (closed = true));
  return {
    socket,
    text: () => Buffer.concat(got).toString('utf8'),
    error: () => error,
    closed: () => closed,
  };
}

describe('FaultProxy', () => {
  let echo: Server;
  let proxy: FaultProxy;
  let port: number;
  const sockets = new Set<Socket>();

  beforeEach(async () => {
    echo = createServer((s) => {
      sockets.add(s);
      s.on('error', () => undefined);
      s.pipe(s);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
    proxy = new FaultProxy({ host: '127.0.0.1', port: (echo.address() as AddressInfo).port });
    port = await proxy.listen();
  });

  afterEach(async () => {
    await proxy.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  it('forwards bytes both ways untouched when there is no fault', async () => {
    const c = await connect(port);
    c.socket.write('hello');
    await waitFor('echo', async () => c.text() === 'hello', { timeoutMs: 2_000, intervalMs: 5 });
    c.socket.destroy();
  });

  it('adds latency to every chunk and keeps their order', async () => {
    proxy.fault({ kind: 'latency', latencyMs: 150, jitterMs: 100 });
    const c = await connect(port);
    const start = Date.now();
    for (const part of ['a', 'b', 'c', 'd']) c.socket.write(part);
    await waitFor('delayed echo', async () => c.text() === 'abcd', { timeoutMs: 3_000, intervalMs: 5 });
    // Two legs (up and down), each at least 150 ms.
    assert.ok(Date.now() - start >= 300, `echo came back after ${Date.now() - start} ms`);
    c.socket.destroy();
  });

  it('stalls a connection until healed, then delivers what it held in order', async () => {
    const c = await connect(port);
    proxy.fault({ kind: 'stall' });
    c.socket.write('one,');
    c.socket.write('two');
    await waitFor('bytes at the proxy', async () => proxy.stats.bytesUp === 7, {
      timeoutMs: 2_000,
      intervalMs: 5,
    });
    assert.equal(proxy.stats.bytesDown, 0, 'nothing reached the server, so nothing came back');
    assert.equal(c.text(), '');
    proxy.fault({ kind: 'stall' }, 50);
    await waitFor('released echo', async () => c.text() === 'one,two', { timeoutMs: 3_000, intervalMs: 10 });
    assert.equal(proxy.current, null, 'the fault healed by itself');
    c.socket.destroy();
  });

  it('resets open connections and refuses new ones while resetting', async () => {
    const c = await connect(port);
    proxy.fault({ kind: 'reset' });
    await waitFor('reset', async () => c.closed(), { timeoutMs: 2_000, intervalMs: 5 });
    assert.equal(c.error()?.code, 'ECONNRESET');
    // A new connection is reset as soon as it is accepted: before or after the client saw it established.
    const d = await connect(port).catch((error: NodeJS.ErrnoException) => error);
    if (d instanceof Error) assert.equal(d.code, 'ECONNRESET');
    else await waitFor('new connection reset', async () => d.closed(), { timeoutMs: 2_000, intervalMs: 5 });
    proxy.heal();
    const e = await connect(port);
    e.socket.write('back');
    await waitFor('echo after heal', async () => e.text() === 'back', { timeoutMs: 2_000, intervalMs: 5 });
    e.socket.destroy();
  });

  it('black-holes bytes for a while, then resets what it swallowed from', async () => {
    const c = await connect(port);
    proxy.fault({ kind: 'blackhole' }, 300);
    c.socket.write('lost');
    await waitFor('connection reset after the black hole', async () => c.closed(), {
      timeoutMs: 3_000,
      intervalMs: 10,
    });
    assert.equal(c.text(), '', 'no byte came back');
    assert.equal(proxy.stats.swallowed, 4);
    const d = await connect(port);
    d.socket.write('ok');
    await waitFor('echo after the black hole', async () => d.text() === 'ok', {
      timeoutMs: 2_000,
      intervalMs: 5,
    });
    d.socket.destroy();
  });

  it('forwards to loopback only', () => {
    assert.throws(() => new FaultProxy({ host: '10.0.0.1' as '127.0.0.1', port: 1 }), /loopback only/);
  });
});
