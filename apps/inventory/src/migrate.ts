import { runMigrations } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadInventoryConfig } from './config/inventory.config';

/** Applies pending migrations of the inventory database (a Kubernetes Job runs the same file). */
runMigrations(loadInventoryConfig(), DATABASE)
  .then((applied) =>
    console.log(JSON.stringify({ level: 'info', service: 'inventory', msg: 'migrations applied', applied })),
  )
  .catch((error: unknown) => {
    console.error(
      JSON.stringify({ level: 'fatal', service: 'inventory', msg: 'migration failed', err: String(error) }),
    );
    process.exit(1);
  });
