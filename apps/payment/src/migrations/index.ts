import { DebeziumHeartbeat1796299021000, MESSAGING_MIGRATIONS } from '@checkout/messaging';
import { CreatePaymentTables1764720000000 } from './1764720000000-create-payment-tables';
import { PspEventReceivedAtIndex1764730000000 } from './1764730000000-psp-event-received-at-index';
import { PspEventKeyPerTenant1796400000000 } from './1796400000000-psp-event-key-per-tenant';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [
  ...MESSAGING_MIGRATIONS,
  CreatePaymentTables1764720000000,
  PspEventReceivedAtIndex1764730000000,
  DebeziumHeartbeat1796299021000,
  PspEventKeyPerTenant1796400000000,
];
