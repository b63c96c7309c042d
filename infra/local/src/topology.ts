/** The services of the product and their databases: the one list the stack, compose and tests read. */
export interface ServiceSpec {
  /** Folder under apps/ and the service name in logs, metrics and traces. */
  name: 'order' | 'inventory' | 'payment' | 'fulfillment' | 'psp-simulator';
  /** Env var that overrides the HTTP port. */
  portEnv: string;
  defaultPort: number;
  /** Its own PostgreSQL database and login role, or null for the PSP simulator (keeps its state itself). */
  database: string | null;
}

export const SERVICES: readonly ServiceSpec[] = [
  { name: 'psp-simulator', portEnv: 'PSP_PORT', defaultPort: 4010, database: null },
  { name: 'order', portEnv: 'ORDER_PORT', defaultPort: 3001, database: 'order_svc' },
  { name: 'inventory', portEnv: 'INVENTORY_PORT', defaultPort: 3002, database: 'inventory_svc' },
  { name: 'payment', portEnv: 'PAYMENT_PORT', defaultPort: 3003, database: 'payment_svc' },
  { name: 'fulfillment', portEnv: 'FULFILLMENT_PORT', defaultPort: 3004, database: 'fulfillment_svc' },
];

/** Services that own a database and publish through an outbox relayed by Debezium. */
export const DB_SERVICES = SERVICES.filter(
  (s): s is ServiceSpec & { database: string } => s.database !== null,
);

/** Env var prefix of a service's database coordinates for the Connect worker, e.g. ORDER_DB. */
export const dbEnvPrefix = (service: string): string => `${service.toUpperCase().replace(/-/g, '_')}_DB`;
