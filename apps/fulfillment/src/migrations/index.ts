import { CreateMessagingTables1764680000000 } from '@checkout/messaging';
import { CreateFulfillmentTables1764740000000 } from './1764740000000-create-fulfillment-tables';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [CreateMessagingTables1764680000000, CreateFulfillmentTables1764740000000];
