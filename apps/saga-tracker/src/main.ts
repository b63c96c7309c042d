// Tracing first: it instruments http, express and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { bootstrapService } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadSagaTrackerConfig } from './config/saga-tracker.config';

const config = loadSagaTrackerConfig();
bootstrapService(AppModule.register(config), config).catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'saga-tracker', msg: 'boot failed', err: String(error) }),
  );
  process.exit(1);
});
