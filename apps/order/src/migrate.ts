import { migrateMain } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadOrderConfig } from './config/order.config';

/** Applies pending migrations of the order database (a Kubernetes Job runs the same file). */
void migrateMain('order', loadOrderConfig, DATABASE);
