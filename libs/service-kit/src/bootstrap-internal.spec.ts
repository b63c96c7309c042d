import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { BaseConfigSchema } from './config';
import { RunningService, createService, exitGracefullyOn, listenService } from './bootstrap';

/** Every log line the service writes, parsed. */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

@Controller()
class ProbeController {
  @Get('boom')
  boom(): never {
    throw new TypeError('cannot read the order row: pool exhausted');
  }

  @Get('ok')
  ok() {
    return { ok: true };
  }

  @Post('echo')
  echo(@Body() body: unknown) {
    return body;
  }

  @Get('metrics')
  metrics() {
    return 'metric_total 1';
  }

  @Get('health/ready')
  ready() {
    return { status: 'ok' };
  }
}

@Module({
  imports: [LoggerModule.forRoot({ pinoHttp: [{ level: 'info' }, sink], forRoutes: [] })],
  controllers: [ProbeController],
})
class ProbeModule {}

const config = BaseConfigSchema.parse({
  SERVICE_NAME: 'bootstrap-internal-spec',
  PORT: '1',
  LOG_LEVEL: 'silent',
  KAFKA_BROKERS: 'unused:9092',
});

/** GET over one keep-alive agent: the answer, and the local port of the socket it came on. */
function get(agent: Agent, port: number, path: string) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown>; socket: number }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            headers: res.headers,
            socket: res.socket?.localPort ?? -1,
          }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** The first line logged after index `from` that `match`es, once it is written (the logger writes asynchronously). */
async function waitForLine(from: number, match: (line: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = lines.slice(from).find(match);
    if (line) return line;
    if (Date.now() > deadline) throw new Error('no such log line within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('service HTTP: errors, headers, internal port', () => {
  let running: RunningService;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    const app = await createService(ProbeModule, config);
    running = await listenService(app, { api: 0, internal: 0 }, '127.0.0.1');
  });

  afterAll(async () => {
    agent.destroy();
    await running.close();
  });

  it('logs the real cause of an unexpected 500 and keeps the keep-alive connection', async () => {
    const first = await get(agent, running.apiPort, '/boom');
    assert.equal(first.status, 500);
    assert.deepEqual(JSON.parse(first.body), { error: 'INTERNAL', message: 'internal error' });
    const logged = lines.find((l) => l.msg === 'unexpected error: answered 500 INTERNAL') as
      { err?: { message?: string; stack?: string }; url?: string } | undefined;
    assert.equal(logged?.err?.message, 'cannot read the order row: pool exhausted');
    assert.match(logged?.err?.stack ?? '', /TypeError/);
    assert.equal(logged?.url, '/boom');
    const access = await waitForLine(0, (l) => l.url === '/boom' && l.statusCode === 500);
    assert.equal(access.msg, 'request errored');
    assert.equal(access.level, 50, 'a 5xx access line is an error');
    assert.ok(!lines.some((l) => JSON.stringify(l).includes('ERR_HTTP_HEADERS_SENT')));
    const second = await get(agent, running.apiPort, '/ok');
    assert.equal(second.status, 200);
    assert.equal(second.socket, first.socket, 'the same connection answered both');
  });

  it('answers JSON with nosniff and no-store', async () => {
    const res = await get(agent, running.apiPort, '/ok');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('serves /metrics and /health only on the internal port, and the API only on the API port', async () => {
    for (const path of ['/metrics', '/health/ready']) {
      assert.equal((await get(agent, running.apiPort, path)).status, 404, `${path} on the API port`);
      assert.equal((await get(agent, running.internalPort, path)).status, 200, `${path} internally`);
    }
    assert.equal((await get(agent, running.internalPort, '/ok')).status, 404);
    assert.equal((await get(agent, running.apiPort, '/ok')).status, 200);
  });

  it('logs an access line per API request, none for the probes and scrapes', async () => {
    const before = lines.length;
    await get(agent, running.internalPort, '/health/ready');
    await get(agent, running.internalPort, '/metrics?name[]=up');
    await get(agent, running.apiPort, '/ok?probe=1');
    const access = await waitForLine(before, (l) => l.msg === 'request completed');
    assert.deepEqual(
      lines
        .slice(before)
        .filter((l) => l.msg === 'request completed')
        .map((l) => l.url),
      ['/ok?probe=1'],
    );
    assert.equal(access.statusCode, 200);
    assert.equal(access.level, 30);
    assert.equal(access.method, 'GET');
    assert.match(String(access.reqId), /^req-/);
    assert.equal(typeof access.responseTime, 'number');
  });

  it('logs a request whose client left before sending its whole body as aborted, at warn', async () => {
    const before = lines.length;
    const socket = connect(running.apiPort, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // `Expect: 100-continue`: the server says when it has the request (headers read, handed to fastify), and the
    // client goes in the middle of the body only then.
    const continued = new Promise((resolve) => socket.once('data', resolve));
    socket.write(
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n' +
        'Expect: 100-continue\r\n\r\n',
    );
    assert.match(String(await continued), /^HTTP\/1\.1 100 Continue/);
    socket.write('{"a":');
    socket.destroy();
    const aborted = await waitForLine(before, (l) => l.msg === 'request aborted');
    assert.equal(aborted.level, 40);
    assert.equal(aborted.url, '/echo');
    assert.equal(aborted.method, 'POST');
  });
});

describe('exitGracefullyOn: SHUTDOWN_TIMEOUT_MS', () => {
  const quiet = { log: () => undefined, error: () => undefined };

  it('exits 0 once the close is done, and 1 when it takes longer than the timeout', async () => {
    const exitCode = process.exitCode;
    process.exitCode = undefined;
    const codes: number[] = [];
    const exited = new Promise<void>((resolve) => {
      exitGracefullyOn(['SIGUSR2'], { close: () => Promise.resolve() }, 5_000, quiet, (code) => {
        codes.push(code);
        resolve();
      });
    });
    process.emit('SIGUSR2', 'SIGUSR2');
    await exited;
    assert.deepEqual(codes, [0]);
    process.removeAllListeners('SIGUSR2');

    let release: () => void = () => undefined;
    const hanging = new Promise<void>((resolve) => (release = resolve));
    const started = Date.now();
    const cut = new Promise<number>((resolve) => {
      exitGracefullyOn(['SIGUSR2'], { close: () => hanging }, 200, quiet, resolve);
    });
    process.emit('SIGUSR2', 'SIGUSR2');
    assert.equal(await cut, 1);
    assert.ok(Date.now() - started >= 200);
    release();
    process.removeAllListeners('SIGUSR2');
    process.exitCode = exitCode;
  });
});
