// Tracing first: it instruments http, express and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { bootstrapService } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadPaymentConfig } from './config/payment.config';

const config = loadPaymentConfig();
// Raw bodies: a webhook signature covers the body exactly as sent.
bootstrapService(AppModule.register(config), config, { rawBody: true }).catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'payment', msg: 'boot failed', err: String(error) }),
  );
  process.exit(1);
});
