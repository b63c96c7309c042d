import { migrateMain } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadSagaTrackerConfig } from './config/saga-tracker.config';

/** Applies pending migrations of the saga tracker database (a Kubernetes Job runs the same file). */
void migrateMain('saga-tracker', loadSagaTrackerConfig, DATABASE);
