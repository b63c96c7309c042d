// Tracing first: it instruments http, express and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { bootstrapService } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadInventoryConfig } from './config/inventory.config';

const config = loadInventoryConfig();
bootstrapService(AppModule.register(config), config).catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'inventory', msg: 'boot failed', err: String(error) }),
  );
  process.exit(1);
});
