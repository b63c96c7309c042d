import { DebeziumHeartbeat1796299021000, MESSAGING_MIGRATIONS } from '@checkout/messaging';
import { CreateStockTables1764700000000 } from './1764700000000-create-stock-tables';
import { AddStockReservationTtl1764800000000 } from './1764800000000-add-stock-reservation-ttl';
import { CreateOrderCancellation1764900000000 } from './1764900000000-create-order-cancellation';
import { ReservationKeyPerTenant1796400000000 } from './1796400000000-reservation-key-per-tenant';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [
  ...MESSAGING_MIGRATIONS,
  CreateStockTables1764700000000,
  AddStockReservationTtl1764800000000,
  CreateOrderCancellation1764900000000,
  DebeziumHeartbeat1796299021000,
  ReservationKeyPerTenant1796400000000,
];
