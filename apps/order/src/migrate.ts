import { runMigrations } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadOrderConfig } from './config/order.config';

/** Applies pending migrations of the order database (a Kubernetes Job runs the same file). */
runMigrations(loadOrderConfig(), DATABASE)
  .then((applied) =>
    console.log(JSON.stringify({ level: 'info', service: 'order', msg: 'migrations applied', applied })),
  )
  .catch((error: unknown) => {
    console.error(
      JSON.stringify({ level: 'fatal', service: 'order', msg: 'migration failed', err: String(error) }),
    );
    process.exit(1);
  });
