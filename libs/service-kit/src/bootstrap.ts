import 'reflect-metadata';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import bodyParser from 'body-parser';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { DomainError } from '@checkout/contracts';
import { inRequestContext, startRequestSpan } from '@checkout/tracing';
import { logAbort, logAccess, markInternalRequest } from './access-log';
import { DomainErrorFilter } from './error.filter';
import { BaseConfig, INTERNAL_ROUTE, internalPort } from './config';
import { connectConsumers } from './consumers';
import { ServiceKitOptions, dataSourceOptions } from './service-kit.module';

/** How a service's HTTP layer differs from the kit's defaults. */
export interface BootstrapOptions {
  /**
   * Keep the exact bytes of every JSON body on `req.rawBody` (Nest's `RawBodyRequest`), next to the parsed
   * body: a webhook signature covers the body as sent, which a re-serialized object cannot reproduce.
   */
  rawBody?: boolean;
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;
/** The request handler fastify gave the API server, to serve the internal port with (listenService). */
const HANDLERS = new WeakMap<INestApplication, RequestHandler>();

/**
 * Creates a service's application on Nest's Fastify adapter, configured but not listening: traces, JSON logs, body
 * limit, error shape, headers.
 */
export async function createService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
  options: BootstrapOptions = {},
): Promise<NestFastifyApplication> {
  let handler: RequestHandler | undefined;
  const adapter = new FastifyAdapter({
    serverFactory: (h: RequestHandler) => {
      handler = h;
      return createServer(h);
    },
    // A request Node's HTTP parser refuses is answered in the error shape (answerClientError), on both ports.
    clientErrorHandler: answerClientError,
    // A URL fastify cannot decode (`/%E0%A4%A`) is a client's error, in the product's shape.
    frameworkErrors: answerBadUrl,
    // Express's routing, which the API was published with: `/v1/checkout/` is `/v1/checkout`, and a path
    // parameter of any length reaches its route's validation (fastify's default of 100 characters answered 404).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
    // No Nest middleware: the access log is a hook of fastify's (access-log.ts). A module that configures
    // middleware fails at start-up instead of running it on a second router per request.
    skipMiddie: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  if (handler) HANDLERS.set(app, handler);
  const logger = app.get(Logger);
  app.useLogger(logger);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', receiveRequest);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', jsonBody(config.BODY_LIMIT, options.rawBody === true));
  // Once the body is read, the request's span is made active for the rest of it (a body the parser refuses is
  // answered before that).
  fastify.addHook('preHandler', activateRequestSpan);
  fastify.addHook('onResponse', logAccess);
  fastify.addHook('onRequestAbort', logAbort);
  app.useGlobalFilters(new DomainErrorFilter(logger));
  return app;
}

/** Every answer: never MIME-sniffed, never cached (answers are per tenant and change with every request). */
const SECURITY_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' } as const;

/** The same, as the header lines of an answer written to the socket by hand (answerClientError). */
const HEADER_LINES = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

const INTERNAL_SOCKET = Symbol('internal-port-socket');

/**
 * The first hook, once fastify has matched the route: starts the request's server span (libs/tracing,
 * request-spans.ts) named by that route, except for the internal routes (scraped and probed every few seconds: no
 * span and no access line, access-log.ts), and sets the security headers. /metrics and /health/* answer only on the
 * internal port, everything else only on the API port: a connection accepted by the internal server (listenService)
 * is marked, and a route asked on the wrong port is a 404.
 */
function receiveRequest(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const internalRoute = INTERNAL_ROUTE.test(req.url);
  if (internalRoute) markInternalRequest(req.raw);
  else startRequestSpan(req.raw, reply.raw, req.routeOptions.url);
  void reply.headers(SECURITY_HEADERS);
  const onInternalPort = (req.raw.socket as Socket & { [INTERNAL_SOCKET]?: true })[INTERNAL_SOCKET] === true;
  if (onInternalPort === internalRoute) {
    done();
    return;
  }
  const path = req.url.split('?', 1)[0];
  void reply.code(404).send({ error: 'NOT_FOUND', message: `Cannot ${req.method} ${path}` });
}

/**
 * Once the body is read: runs the rest of the request (Nest's middleware, guards, pipes, the route's handler and what
 * it awaits) with the request's span active, whatever the body's reading did to the async context. (A Nest
 * interceptor would do too, but running Nest's interceptor pipeline for every request cost as much as the
 * instrumentation this replaced.)
 */
function activateRequestSpan(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  inRequestContext(req.raw, done);
}

/** A service listening on its API port and on its internal port. */
export interface RunningService {
  app: INestApplication;
  apiPort: number;
  internalPort: number;
  /** Runs the app's shutdown hooks (consumers drain, workers finish), then closes both ports. */
  close(): Promise<void>;
}

/** Listens on `ports.api` (the API) and `ports.internal` (/metrics, /health/*); 0 picks a free port. */
export async function listenService(
  app: INestApplication,
  ports: { api: number; internal: number },
  host = '0.0.0.0',
): Promise<RunningService> {
  const handler = HANDLERS.get(app);
  if (!handler) throw new Error('listenService serves an app made by createService');
  await app.listen(ports.api, host);
  const internal: Server = createServer(handler);
  internal.on('clientError', answerClientError);
  internal.on('connection', (socket: Socket & { [INTERNAL_SOCKET]?: true }) => {
    socket[INTERNAL_SOCKET] = true;
  });
  await new Promise<void>((resolve, reject) => {
    internal.once('error', reject);
    internal.listen(ports.internal, host, () => resolve());
  });
  return {
    app,
    apiPort: ((app.getHttpServer() as Server).address() as AddressInfo).port,
    internalPort: (internal.address() as AddressInfo).port,
    close: async () => {
      try {
        await app.close();
      } finally {
        await new Promise<void>((resolve) => internal.close(() => resolve()));
      }
    },
  };
}

/**
 * A request Node's HTTP parser refuses before the app sees it (a URL or headers over the 16 KiB limit, a bad
 * request line) is answered in the error shape of every other 4xx, then the connection closes: Node's own answer
 * is a status line without a body. A socket already gone or written to is left alone.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (
    error.code === 'ECONNRESET' ||
    !socket.writable ||
    (socket as { _httpMessage?: unknown })._httpMessage
  ) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW' || error.code === 'HPE_URI_TOO_LONG';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify(
    tooLarge
      ? { error: 'REQUEST_HEADERS_TOO_LARGE', message: 'the request line and headers exceed 16 KiB' }
      : { error: 'MALFORMED_REQUEST', message: 'the request is not valid HTTP/1.1' },
  );
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      HEADER_LINES +
      'Connection: close\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${isHeadRequest(error) ? '' : body}`,
  );
}

/**
 * Whether the refused request is a HEAD, whose answer has no body (RFC 9110 9.3.2): its client reads the bytes after
 * the head as the next answer ("Expected HTTP/"). The parser hands over the chunk it failed in (`rawPacket`); a
 * request line that arrived in an earlier chunk is not seen, and that answer keeps its body.
 */
function isHeadRequest(error: Error): boolean {
  const { rawPacket } = error as { rawPacket?: unknown };
  return Buffer.isBuffer(rawPacket) && rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
}

/** Fastify's router refused the URL (a percent-escape that does not decode): 400 in the error shape. */
function answerBadUrl(_error: Error, _req: FastifyRequest, reply: FastifyReply): void {
  void reply
    .code(400)
    .headers(SECURITY_HEADERS)
    .send({
      error: 'VALIDATION_FAILED',
      message: 'the URL is not valid',
      issues: [{ path: '', message: 'bad URL' }],
    });
}

type BodyParserFn = (
  req: FastifyRequest & { rawBody?: Buffer },
  payload: IncomingMessage,
  done: (error: Error | null, body?: unknown) => void,
) => void;

/**
 * The one body parser of every request with a body: JSON (`application/json`, `application/*+json`) up to
 * `limit`, gzip/deflate/br bodies inflated, a charset other than UTF-8 refused, the exact bytes kept on
 * `req.rawBody` with `rawBody`; any other type is not read (the route's validation refuses a missing body). The
 * reading is body-parser's (the JSON parser express uses), its refusals turned into the product's error answers.
 */
function jsonBody(limit: string, rawBody: boolean): BodyParserFn {
  const parse = bodyParser.json({
    limit,
    type: ['application/json', 'application/*+json'],
    ...(rawBody
      ? {
          verify: (req: IncomingMessage & { rawBody?: Buffer }, _res: unknown, buf: Buffer) => {
            req.rawBody = buf;
          },
        }
      : {}),
  });
  return (req, payload, done) => {
    const raw = payload as IncomingMessage & { body?: unknown; rawBody?: Buffer };
    // The answer is not the parser's business (only `verify` is handed it).
    parse(raw, undefined as unknown as ServerResponse, (error?: unknown) => {
      if (error) {
        done(bodyError(error, raw));
        return;
      }
      if (rawBody) req.rawBody = raw.rawBody;
      done(null, raw.body);
    });
  };
}

/** body-parser's refusal of a body as the product's answer: malformed JSON, oversized body, charset, encoding. */
function bodyError(error: unknown, req: IncomingMessage): Error {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') {
    // docs/api.md's 400 VALIDATION_FAILED for every unusable body; `issues` says what, in validate()'s shape.
    return new DomainError('VALIDATION_FAILED', 'request body is not valid JSON', {
      issues: [{ path: '', message: 'malformed JSON' }],
    });
  }
  if (type === 'entity.too.large') {
    // The parser refused on Content-Length without reading: read and drop the rest as it arrives, or the socket
    // is closed with bytes unread and the client sees a reset (ECONNRESET) instead of this answer.
    req.resume();
    return new DomainError('PAYLOAD_TOO_LARGE', 'request body is too large');
  }
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'unsupported body charset or encoding');
  }
  if (isClientBodyError(error)) {
    // A body that cannot be read as sent: a gzip/deflate/br body that does not decompress, a Content-Length the
    // bytes do not match. The parser says 400 (no `type`); left alone it became a 500 INTERNAL (issue 18).
    return new DomainError(
      'VALIDATION_FAILED',
      'request body could not be read as sent (Content-Encoding or Content-Length)',
      { issues: [{ path: '', message: 'unreadable body' }] },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** An http-errors error of the body parser that blames the request (status 400, exposed to the client). */
function isClientBodyError(error: unknown): boolean {
  const e = error as { status?: unknown; expose?: unknown } | null;
  return e?.status === 400 && e.expose === true;
}

/**
 * Creates and starts a service on `config.PORT` and its internal port (see createService, listenService); a
 * service with consumers is a hybrid app, its consumer transport started once the app is initialised (the
 * groups join in the background: the ports do not wait for Kafka). SIGTERM/SIGINT close it gracefully (the
 * consumers drain before the database closes); past SHUTDOWN_TIMEOUT_MS the process exits with code 1 anyway.
 */
export async function bootstrapService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
  options: BootstrapOptions = {},
): Promise<RunningService> {
  const app = await createService(module, config, options);
  const consumes = connectConsumers(app);
  // Initialised first: the consumers' handlers may need what onModuleInit opens (a Redis client).
  await app.init();
  if (consumes) await app.startAllMicroservices();
  const running = await listenService(app, { api: config.PORT, internal: internalPort(config) });
  exitGracefullyOn(['SIGTERM', 'SIGINT'], running, config.SHUTDOWN_TIMEOUT_MS, app.get(Logger));
  return running;
}

/** On the first of `signals`: close the service, then exit; a close that takes longer than `timeoutMs` is cut. */
export function exitGracefullyOn(
  signals: NodeJS.Signals[],
  running: Pick<RunningService, 'close'>,
  timeoutMs: number,
  logger: Pick<Logger, 'log' | 'error'>,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log({ signal, timeoutMs }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ signal, timeoutMs }, 'shutdown took longer than SHUTDOWN_TIMEOUT_MS: exiting now');
      exit(1);
    }, timeoutMs);
    running.close().then(
      () => {
        clearTimeout(deadline);
        exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
}

/** The body of a service's migrate.ts: runs its pending migrations, each in its own transaction. */
export async function runMigrations(
  config: Pick<BaseConfig, 'SERVICE_NAME' | 'DB_POOL_SIZE' | 'DB_PREPARED_STATEMENTS' | 'DATABASE_URL'>,
  database: NonNullable<ServiceKitOptions['database']>,
): Promise<string[]> {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required');
  const ds = new DataSource(dataSourceOptions(config.DATABASE_URL, database, config));
  await ds.initialize();
  try {
    const done = await ds.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}

/**
 * The body of a service's `migrate.js` (the Kubernetes Job runs the same file): loads the config, applies the
 * pending migrations and logs one JSON line; a bad config or a failed migration is fatal (exit code 1).
 */
export async function migrateMain(
  service: string,
  loadConfig: () => Parameters<typeof runMigrations>[0],
  database: Parameters<typeof runMigrations>[1],
): Promise<void> {
  try {
    const applied = await runMigrations(loadConfig(), database);
    console.log(JSON.stringify({ level: 'info', service, msg: 'migrations applied', applied }));
  } catch (error) {
    console.error(JSON.stringify({ level: 'fatal', service, msg: 'migration failed', err: String(error) }));
    process.exit(1);
  }
}
