import { DebeziumHeartbeat1796299021000, MESSAGING_MIGRATIONS } from '@checkout/messaging';
import { CreateFulfillmentTables1764740000000 } from './1764740000000-create-fulfillment-tables';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [
  ...MESSAGING_MIGRATIONS,
  CreateFulfillmentTables1764740000000,
  DebeziumHeartbeat1796299021000,
];
