import { CreateMessagingTables1764680000000 } from '@checkout/messaging';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [CreateMessagingTables1764680000000];
