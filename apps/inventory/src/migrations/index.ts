import { CreateMessagingTables1764680000000 } from '@checkout/messaging';
import { CreateStockTables1764700000000 } from './1764700000000-create-stock-tables';
import { AddStockReservationTtl1764800000000 } from './1764800000000-add-stock-reservation-ttl';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [
  CreateMessagingTables1764680000000,
  CreateStockTables1764700000000,
  AddStockReservationTtl1764800000000,
];
