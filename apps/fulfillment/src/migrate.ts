import { runMigrations } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadFulfillmentConfig } from './config/fulfillment.config';

/** Applies pending migrations of the fulfillment database (a Kubernetes Job runs the same file). */
runMigrations(loadFulfillmentConfig(), DATABASE)
  .then((applied) =>
    console.log(
      JSON.stringify({ level: 'info', service: 'fulfillment', msg: 'migrations applied', applied }),
    ),
  )
  .catch((error: unknown) => {
    console.error(
      JSON.stringify({ level: 'fatal', service: 'fulfillment', msg: 'migration failed', err: String(error) }),
    );
    process.exit(1);
  });
