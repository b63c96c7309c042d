import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Body, Controller, Get, Module, Param, Post, RawBodyRequest, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import { BaseConfigSchema } from './config';
import { BootstrapOptions, createService, listenService } from './bootstrap';

@Controller('echo')
class EchoController {
  @Post()
  echo(@Req() req: RawBodyRequest<FastifyRequest>, @Body() body: unknown) {
    return { raw: req.rawBody?.toString('utf8') ?? null, body };
  }

  @Get(':id')
  length(@Param('id') id: string) {
    return { length: id.length };
  }
}

@Module({
  imports: [LoggerModule.forRoot({ pinoHttp: { level: 'silent' }, forRoutes: [] })],
  controllers: [EchoController],
})
class EchoModule {}

const config = BaseConfigSchema.parse({
  SERVICE_NAME: 'bootstrap-spec',
  PORT: '1',
  LOG_LEVEL: 'silent',
  KAFKA_BROKERS: 'unused:9092',
  BODY_LIMIT: '1kb',
});

/** Starts the echo service with the kit's HTTP setup on a free port. */
async function start(options?: BootstrapOptions) {
  const app = await createService(EchoModule, config, options);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const post = (
    body: string | Buffer,
    contentType = 'application/json',
    headers: Record<string, string> = {},
  ) =>
    fetch(`http://127.0.0.1:${port}/echo`, {
      method: 'POST',
      headers: { 'content-type': contentType, ...headers },
      body,
    });
  return { app, post };
}

// Spacing, key order and escapes that JSON.stringify(JSON.parse(x)) would not give back.
const SENT = '{ "b":1,\n  "a":"\\u00e9t\u00e9" }';

describe('bootstrapService / createService', () => {
  let plain: Awaited<ReturnType<typeof start>>;
  let raw: Awaited<ReturnType<typeof start>>;

  beforeAll(async () => {
    plain = await start();
    raw = await start({ rawBody: true });
  });

  afterAll(async () => {
    await plain.app.close();
    await raw.app.close();
  });

  it('parses JSON and keeps no raw body by default (the other services)', async () => {
    const res = await plain.post(SENT);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-powered-by'), null);
    assert.equal(res.headers.get('etag'), null);
    assert.deepEqual(await res.json(), { raw: null, body: { b: 1, a: 'été' } });
  });

  it('with rawBody keeps the exact bytes sent next to the parsed body', async () => {
    const res = await raw.post(SENT);
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { raw: SENT, body: { b: 1, a: 'été' } });
    const vendor = await raw.post('{"x":true}', 'application/vnd.psp+json');
    assert.deepEqual(await vendor.json(), { raw: '{"x":true}', body: { x: true } });
  });

  it('keeps the body limit and the error shape either way', async () => {
    for (const { post } of [plain, raw]) {
      const big = await post(JSON.stringify({ pad: 'x'.repeat(2048) }));
      assert.equal(big.status, 413);
      assert.equal(((await big.json()) as { error: string }).error, 'PAYLOAD_TOO_LARGE');
      const broken = await post('{"a":');
      assert.equal(broken.status, 400);
      assert.deepEqual(await broken.json(), {
        error: 'VALIDATION_FAILED',
        message: 'request body is not valid JSON',
        issues: [{ path: '', message: 'malformed JSON' }],
      });
    }
  });

  // Issue 18 (fuzz): a body whose Content-Encoding lies answered 500 INTERNAL.
  it('answers a body that does not decompress with 400 VALIDATION_FAILED, a real gzip body as usual', async () => {
    for (const { post } of [plain, raw]) {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await post('{"a":1}', 'application/json', { 'content-encoding': encoding });
        assert.equal(res.status, 400, `Content-Encoding: ${encoding} on plain bytes`);
        assert.deepEqual(await res.json(), {
          error: 'VALIDATION_FAILED',
          message: 'request body could not be read as sent (Content-Encoding or Content-Length)',
          issues: [{ path: '', message: 'unreadable body' }],
        });
      }
      const zipped = await post(gzipSync('{"a":1}'), 'application/json', { 'content-encoding': 'gzip' });
      assert.equal(zipped.status, 201);
      assert.deepEqual(((await zipped.json()) as { body: unknown }).body, { a: 1 });
    }
  });
  it('refuses a charset other than UTF-8 with 415, and leaves a body of another type unread', async () => {
    const latin1 = await plain.post('{"a":1}', 'application/json; charset=latin1');
    assert.equal(latin1.status, 415);
    assert.deepEqual(await latin1.json(), {
      error: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'unsupported body charset or encoding',
    });
    const utf8 = await plain.post('{"a":1}', 'application/json; charset=UTF-8');
    assert.deepEqual(((await utf8.json()) as { body: unknown }).body, { a: 1 });
    // Not JSON: not parsed, so the route sees no body (and its validation refuses it), as with express.
    const text = await plain.post('{"a":1}', 'text/plain');
    assert.equal(text.status, 201);
    assert.deepEqual(await text.json(), { raw: null });
  });

  it('answers a URL that does not decode with 400 in the error shape, and routes a trailing slash and a long parameter', async () => {
    const { port } = plain.app.getHttpServer().address() as AddressInfo;
    const bad = await fetch(`http://127.0.0.1:${port}/echo%E0%A4%A`, { method: 'POST' });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(((await bad.json()) as { error: string }).error, 'VALIDATION_FAILED');
    const slash = await fetch(`http://127.0.0.1:${port}/echo/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":2}',
    });
    assert.equal(slash.status, 201);
    // A long path parameter reaches its route (whose validation decides), as any other.
    const long = await fetch(`http://127.0.0.1:${port}/echo/${'s'.repeat(500)}`);
    assert.deepEqual(await long.json(), { length: 500 });
  });
});

/** Sends raw bytes and reads everything the server writes until it closes the connection. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

// Issue 18 (fuzz): a 20 kB URL was answered by Node's parser with a bare 431 and no error body.
describe('listenService: requests the HTTP parser refuses', () => {
  let running: Awaited<ReturnType<typeof listenService>>;

  beforeAll(async () => {
    running = await listenService(
      await createService(EchoModule, config),
      { api: 0, internal: 0 },
      '127.0.0.1',
    );
  });

  afterAll(async () => {
    await running.close();
  });

  const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown;

  it('answers a URL or headers over 16 KiB with 431 REQUEST_HEADERS_TOO_LARGE in the error shape, on both ports', async () => {
    for (const port of [running.apiPort, running.internalPort]) {
      const longUrl = await rawExchange(port, `GET /${'A'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(longUrl, /^HTTP\/1\.1 431 /);
      assert.match(longUrl, /\r\ncontent-type: application\/json/i);
      assert.deepEqual(bodyOf(longUrl), {
        error: 'REQUEST_HEADERS_TOO_LARGE',
        message: 'the request line and headers exceed 16 KiB',
      });
      const longHeader = await rawExchange(
        port,
        `GET /echo HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`,
      );
      assert.match(longHeader, /^HTTP\/1\.1 431 /);
    }
  });

  it('answers a HEAD over 16 KiB with the same 431 head and no body (its client would read the body as an answer)', async () => {
    const answer = await rawExchange(
      running.apiPort,
      `HEAD /${'A'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );

    assert.match(answer, /^HTTP\/1\.1 431 /);
    assert.match(answer, /\r\ncontent-type: application\/json/i);
    assert.ok(answer.endsWith('\r\n\r\n'), `nothing after the head: ${JSON.stringify(answer.slice(-120))}`);
  });

  it('answers a request that is not HTTP with 400 MALFORMED_REQUEST in the error shape', async () => {
    const answer = await rawExchange(running.apiPort, 'NOT HTTP AT ALL\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.deepEqual(bodyOf(answer), {
      error: 'MALFORMED_REQUEST',
      message: 'the request is not valid HTTP/1.1',
    });
  });

  it('still serves a normal request on the same server', async () => {
    const res = await fetch(`http://127.0.0.1:${running.apiPort}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.equal(res.status, 201);
  });
});
