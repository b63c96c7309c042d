import 'reflect-metadata';
import { IncomingMessage } from 'node:http';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { json } from 'express';
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
  app.useGlobalFilters(new ApiErrorFilter());
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.set('x-powered-by', false);
  return app;
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
