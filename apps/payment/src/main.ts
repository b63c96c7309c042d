// Tracing first: it instruments http, express and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { IncomingMessage } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { json } from 'express';
import { ApiErrorFilter } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadPaymentConfig } from './config/payment.config';

/**
 * The kit's bootstrap, except that the JSON parser keeps the raw bytes: a webhook signature covers the body
 * exactly as sent, which a re-serialized object cannot reproduce.
 */
async function bootstrap(): Promise<void> {
  const config = loadPaymentConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  app.use(
    json({
      limit: config.BODY_LIMIT,
      type: ['application/json', 'application/*+json'],
      verify: (req: IncomingMessage & { rawBody?: Buffer }, _res, buf) => {
        req.rawBody = buf;
      },
    }),
  );
  app.useGlobalFilters(new ApiErrorFilter());
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.set('x-powered-by', false);
  await app.listen(config.PORT, '0.0.0.0');
}

bootstrap().catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'payment', msg: 'boot failed', err: String(error) }),
  );
  process.exit(1);
});
