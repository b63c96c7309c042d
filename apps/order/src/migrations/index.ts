import { CreateMessagingTables1764680000000 } from '@checkout/messaging';
import { CreateOrderTables1764700000000 } from './1764700000000-create-order-tables';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [CreateMessagingTables1764680000000, CreateOrderTables1764700000000];
