import { DebeziumHeartbeat1796299021000, MESSAGING_MIGRATIONS } from '@checkout/messaging';
import { CreateOrderTables1764700000000 } from './1764700000000-create-order-tables';
import { ApologyVouchers1764770000000 } from './1764770000000-apology-vouchers';
import { VoucherSlots1764780000000 } from './1764780000000-voucher-slots';
import { OrderLinesBySku1796660000000 } from './1796660000000-order-lines-by-sku';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [
  ...MESSAGING_MIGRATIONS,
  CreateOrderTables1764700000000,
  ApologyVouchers1764770000000,
  VoucherSlots1764780000000,
  DebeziumHeartbeat1796299021000,
  OrderLinesBySku1796660000000,
];
