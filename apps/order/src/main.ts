// Tracing first: it instruments http, express and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { bootstrapService } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadOrderConfig } from './config/order.config';

const config = loadOrderConfig();
bootstrapService(AppModule.register(config), config).catch((error: unknown) => {
  console.error(JSON.stringify({ level: 'fatal', service: 'order', msg: 'boot failed', err: String(error) }));
  process.exit(1);
});
