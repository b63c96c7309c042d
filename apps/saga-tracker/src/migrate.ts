import { runMigrations } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadSagaTrackerConfig } from './config/saga-tracker.config';

/** Applies pending migrations of the saga tracker database (a Kubernetes Job runs the same file). */
runMigrations(loadSagaTrackerConfig(), DATABASE)
  .then((applied) =>
    console.log(
      JSON.stringify({ level: 'info', service: 'saga-tracker', msg: 'migrations applied', applied }),
    ),
  )
  .catch((error: unknown) => {
    console.error(
      JSON.stringify({
        level: 'fatal',
        service: 'saga-tracker',
        msg: 'migration failed',
        err: String(error),
      }),
    );
    process.exit(1);
  });
