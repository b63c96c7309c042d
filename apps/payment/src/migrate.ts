import { runMigrations } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadPaymentConfig } from './config/payment.config';

/** Applies pending migrations of the payment database (a Kubernetes Job runs the same file). */
runMigrations(loadPaymentConfig(), DATABASE)
  .then((applied) =>
    console.log(JSON.stringify({ level: 'info', service: 'payment', msg: 'migrations applied', applied })),
  )
  .catch((error: unknown) => {
    console.error(
      JSON.stringify({ level: 'fatal', service: 'payment', msg: 'migration failed', err: String(error) }),
    );
    process.exit(1);
  });
