// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { loadFulfillmentConfig } from './config/fulfillment.config';
import { DATABASE } from './database';
import { NotificationsModule } from './notifications/notifications.module';
import { ShippingModule } from './shipping/shipping.module';

runService({
  name: 'fulfillment',
  config: loadFulfillmentConfig(),
  database: DATABASE,
  publishes: true,
  consumers: { codePrefix: 'FULFILLMENT', sagaLocks: true },
  areas: [ShippingModule, NotificationsModule],
});
