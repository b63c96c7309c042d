import 'reflect-metadata';
import { IncomingMessage } from 'node:http';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { NextFunction, Request, Response, json } from 'express';
import { DataSource } from 'typeorm';
import { ApiErrorFilter } from './api-error';
import { BaseConfig } from './config';
import { ServiceKitOptions, dataSourceOptions } from './service-kit.module';

/** How a service's HTTP layer differs from the kit's defaults. */
export interface BootstrapOptions {
  /**
   * Keep the exact bytes of every JSON body on `req.rawBody` (Nest's `RawBodyRequest`), next to the parsed
   * body: a webhook signature covers the body as sent, which a re-serialized object cannot reproduce.
   */
  rawBody?: boolean;
}

/** Creates a service's application, configured but not listening: JSON logs, body limit, error shape, SIGTERM. */
export async function createService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
  options: BootstrapOptions = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
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
  app.useGlobalFilters(new ApiErrorFilter());
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.set('x-powered-by', false);
  return app;
}

/** Express error middleware for the JSON parser: malformed JSON, oversized body, unsupported charset. */
export function bodyParserErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') {
    // PRODUCT.md's 400 for every unusable body; `issues` says what, in validate()'s shape.
    res.status(400).json({
      error: 'VALIDATION_FAILED',
      message: 'request body is not valid JSON',
      issues: [{ path: '', message: 'malformed JSON' }],
    });
  } else if (type === 'entity.too.large') {
    res.status(413).json({ error: 'PAYLOAD_TOO_LARGE', message: 'request body is too large' });
  } else if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    res
      .status(415)
      .json({ error: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported body charset or encoding' });
  } else {
    next(error);
  }
}

/** Creates and starts a service on `config.PORT` (see createService). */
export async function bootstrapService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
  options: BootstrapOptions = {},
): Promise<INestApplication> {
  const app = await createService(module, config, options);
  await app.listen(config.PORT, '0.0.0.0');
  return app;
}

/** The body of a service's migrate.ts: runs its pending migrations, each in its own transaction. */
export async function runMigrations(
  url: string,
  database: NonNullable<ServiceKitOptions['database']>,
): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(url, database));
  await ds.initialize();
  try {
    const done = await ds.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
