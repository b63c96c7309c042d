import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { json } from 'express';
import { DataSource } from 'typeorm';
import { ApiErrorFilter } from './api-error';
import { BaseConfig } from './config';
import { ServiceKitOptions, dataSourceOptions } from './service-kit.module';

/** Creates and starts a service: JSON logs, body limit, error shape, graceful SIGTERM. */
export async function bootstrapService(
  module: Parameters<typeof NestFactory.create>[0],
  config: BaseConfig,
): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  app.use(json({ limit: config.BODY_LIMIT, type: ['application/json', 'application/*+json'] }));
  app.useGlobalFilters(new ApiErrorFilter());
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.set('x-powered-by', false);
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
