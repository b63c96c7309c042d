/** The services of the product and their databases: the one list the stack, compose and tests read. */
export interface ServiceSpec {
  /** Folder under apps/ and the service name in logs, metrics and traces. */
  name: 'order' | 'inventory' | 'payment' | 'fulfillment' | 'psp-simulator' | 'saga-tracker';
  /** Env var that overrides the HTTP port. */
  portEnv: string;
  defaultPort: number;
  /** Its own PostgreSQL database and login role, or null for the PSP simulator (keeps its state itself). */
  database: string | null;
  /**
   * Whether it publishes events through a transactional outbox in that database, relayed by its own Debezium
   * connector (infra/debezium/<name>.json). The saga tracker only consumes: a database, no outbox, no connector.
   */
  outbox: boolean;
}

export const SERVICES: readonly ServiceSpec[] = [
  { name: 'psp-simulator', portEnv: 'PSP_PORT', defaultPort: 4010, database: null, outbox: false },
  { name: 'order', portEnv: 'ORDER_PORT', defaultPort: 3001, database: 'order_svc', outbox: true },
  {
    name: 'inventory',
    portEnv: 'INVENTORY_PORT',
    defaultPort: 3002,
    database: 'inventory_svc',
    outbox: true,
  },
  { name: 'payment', portEnv: 'PAYMENT_PORT', defaultPort: 3003, database: 'payment_svc', outbox: true },
  {
    name: 'fulfillment',
    portEnv: 'FULFILLMENT_PORT',
    defaultPort: 3004,
    database: 'fulfillment_svc',
    outbox: true,
  },
  {
    name: 'saga-tracker',
    portEnv: 'SAGA_TRACKER_PORT',
    defaultPort: 3005,
    database: 'saga_svc',
    outbox: false,
  },
];

/** Services that own a database (and a login role of the same name). */
export const DB_SERVICES = SERVICES.filter(
  (s): s is ServiceSpec & { database: string } => s.database !== null,
);

/** Services whose database has an outbox relayed by Debezium: one connector and one replication slot each. */
export const OUTBOX_SERVICES = DB_SERVICES.filter((s) => s.outbox);

/** Env var prefix of a service's database coordinates for the Connect worker, e.g. ORDER_DB. */
export const dbEnvPrefix = (service: string): string => `${service.toUpperCase().replace(/-/g, '_')}_DB`;
