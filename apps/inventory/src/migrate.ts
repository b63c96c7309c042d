import { migrateMain } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadInventoryConfig } from './config/inventory.config';

/** Applies pending migrations of the inventory database (a Kubernetes Job runs the same file). */
void migrateMain('inventory', loadInventoryConfig, DATABASE);
