import 'reflect-metadata';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { NextFunction, Request, Response, json } from 'express';
import { DataSource } from 'typeorm';
import { inRequestContext, startRequestSpan } from '@checkout/tracing';
import { DomainErrorFilter } from './error.filter';
import { BaseConfig, internalPort } from './config';
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

/** Creates a service's application, configured but not listening: traces, JSON logs, body limit, error shape, headers. */
export async function createService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
  options: BootstrapOptions = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bufferLogs: true,
    bodyParser: false,
  });
  const logger = app.get(Logger);
  app.useLogger(logger);
  app.use(traceRequest);
  app.use(securityHeaders);
  app.use(splitInternalRoutes);
  app.use(
    json({
      limit: config.BODY_LIMIT,
      type: ['application/json', 'application/*+json'],
      ...(options.rawBody
        ? {
            verify: (req: IncomingMessage & { rawBody?: Buffer }, _res: unknown, buf: Buffer) => {
              req.rawBody = buf;
            },
          }
        : {}),
    }),
  );
  // Answer body-parser's errors here, while their `type` is known: past this point Nest turns a JSON syntax
  // error into a bare 400 carrying the parser's message.
  app.use(bodyParserErrors);
  app.use(activateRequestSpan);
  app.useGlobalFilters(new DomainErrorFilter(logger));
  app.set('x-powered-by', false);
  // No ETag: every answer is `Cache-Control: no-store`, so no client revalidates one, and hashing each body
  // was 0.6% of a refused checkout's CPU.
  app.set('etag', false);
  return app;
}

/** Every answer: never MIME-sniffed, never cached (answers are per tenant and change with every request). */
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  next();
}

const INTERNAL_SOCKET = Symbol('internal-port-socket');
/** The internal routes, by path or by URL (the query after `?`). */
const INTERNAL_ROUTE = /^\/(metrics|health)([/?]|$)/;

/**
 * /metrics and /health/* answer only on the internal port, everything else only on the API port: a connection
 * accepted by the internal server (listenService) is marked, and a route asked on the wrong port is a 404.
 */
export function splitInternalRoutes(req: Request, res: Response, next: NextFunction): void {
  const onInternalPort = (req.socket as Socket & { [INTERNAL_SOCKET]?: true })[INTERNAL_SOCKET] === true;
  if (onInternalPort === INTERNAL_ROUTE.test(req.path)) {
    next();
    return;
  }
  res.status(404).json({ error: 'NOT_FOUND', message: `Cannot ${req.method} ${req.path}` });
}

/**
 * The first middleware: starts the request's server span (libs/tracing, request-spans.ts). The internal routes make
 * no trace: they are scraped and probed every few seconds.
 */
export function traceRequest(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (!INTERNAL_ROUTE.test(req.url ?? '/')) startRequestSpan(req, res);
  next();
}

/**
 * Right after the body parser: runs the rest of the chain (guards, pipes, the route's handler and what it awaits)
 * with the request's span active. Before the body is read would not do: the parser resumes from the socket's
 * events, outside any context a middleware made active. (A Nest interceptor would, but running Nest's interceptor
 * pipeline for every request cost as much as the instrumentation this replaces.)
 */
export function activateRequestSpan(req: IncomingMessage, _res: ServerResponse, next: () => void): void {
  inRequestContext(req, next);
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
  await app.listen(ports.api, host);
  answerClientErrors(app.getHttpServer() as Server);
  const internal: Server = createServer(app.getHttpAdapter().getInstance());
  answerClientErrors(internal);
  internal.on('connection', (socket: Socket & { [INTERNAL_SOCKET]?: true }) => {
    socket[INTERNAL_SOCKET] = true;
  });
  await new Promise<void>((resolve, reject) => {
    internal.once('error', reject);
    internal.listen(ports.internal, host, () => resolve());
  });
  return {
    app,
    apiPort: (app.getHttpServer().address() as AddressInfo).port,
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
 * A request Node's HTTP parser refuses before express sees it (a URL or headers over the 16 KiB limit, a bad
 * request line) is answered in the error shape of every other 4xx, then the connection closes: Node's own answer
 * is a status line without a body. A socket already gone or written to is left alone.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
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
        'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${isHeadRequest(error) ? '' : body}`,
    );
  });
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

/** Express error middleware for the JSON parser: malformed JSON, oversized body, unsupported charset. */
export function bodyParserErrors(error: unknown, req: Request, res: Response, next: NextFunction): void {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') {
    // docs/api.md's 400 VALIDATION_FAILED for every unusable body; `issues` says what, in validate()'s shape.
    res.status(400).json({
      error: 'VALIDATION_FAILED',
      message: 'request body is not valid JSON',
      issues: [{ path: '', message: 'malformed JSON' }],
    });
  } else if (type === 'entity.too.large') {
    // The parser refused on Content-Length without reading: read and drop the rest as it arrives, or the socket
    // is closed with bytes unread and the client sees a reset (ECONNRESET) instead of this answer.
    req.resume();
    res.status(413).json({ error: 'PAYLOAD_TOO_LARGE', message: 'request body is too large' });
  } else if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    res
      .status(415)
      .json({ error: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported body charset or encoding' });
  } else if (isClientBodyError(error)) {
    // A body that cannot be read as sent: a gzip/deflate/br body that does not decompress, a Content-Length the
    // bytes do not match. The parser says 400 (no `type`); left to Nest it became a 500 INTERNAL (issue 18).
    res.status(400).json({
      error: 'VALIDATION_FAILED',
      message: 'request body could not be read as sent (Content-Encoding or Content-Length)',
      issues: [{ path: '', message: 'unreadable body' }],
    });
  } else {
    next(error);
  }
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
