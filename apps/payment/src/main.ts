// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { loadPaymentConfig } from './config/payment.config';
import { DATABASE } from './database';
import { PaymentModule } from './payment/payment.module';

const config = loadPaymentConfig();
runService({
  name: 'payment',
  config,
  database: DATABASE,
  publishes: true,
  pspCredentials: true,
  consumers: { codePrefix: 'PAYMENT', batchSize: config.PAYMENT_ATTEMPT_BATCH_SIZE, sagaLocks: true },
  areas: [PaymentModule],
  // Raw bodies: a webhook signature covers the body exactly as sent.
  http: { rawBody: true },
});
