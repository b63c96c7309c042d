// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { fetchOf, loadSagaTrackerConfig } from './config/saga-tracker.config';
import { DATABASE } from './database';
import { SagaModule } from './saga/saga.module';

// The tracker consumes every saga topic and publishes nothing: a database with an inbox and no outbox.
const config = loadSagaTrackerConfig();
runService({
  name: 'saga-tracker',
  config,
  database: DATABASE,
  consumers: { codePrefix: 'SAGA', fetch: fetchOf(config) },
  areas: [SagaModule.register(config)],
});
