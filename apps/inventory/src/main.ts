// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { loadInventoryConfig } from './config/inventory.config';
import { DATABASE } from './database';
import { ReservationModule } from './reservation/reservation.module';

const config = loadInventoryConfig();
runService({
  name: 'inventory',
  config,
  database: DATABASE,
  publishes: true,
  consumers: { codePrefix: 'INVENTORY', batchSize: config.INVENTORY_RESERVE_BATCH_SIZE, sagaLocks: true },
  areas: [ReservationModule],
});
