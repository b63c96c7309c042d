import { migrateMain } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadFulfillmentConfig } from './config/fulfillment.config';

/** Applies pending migrations of the fulfillment database (a Kubernetes Job runs the same file). */
void migrateMain('fulfillment', loadFulfillmentConfig, DATABASE);
