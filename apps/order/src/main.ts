// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { CatalogModule } from './catalog/catalog.module';
import { CheckoutModule } from './checkout/checkout.module';
import { loadOrderConfig } from './config/order.config';
import { DATABASE } from './database';
import { GateModule } from './gate/gate.module';
import { OrdersModule } from './orders/orders.module';

const config = loadOrderConfig();
runService({
  name: 'order',
  config,
  database: DATABASE,
  publishes: true,
  consumers: { codePrefix: 'ORDER', sagaLocks: true },
  areas: [GateModule, CatalogModule, CheckoutModule.register(config), OrdersModule],
});
