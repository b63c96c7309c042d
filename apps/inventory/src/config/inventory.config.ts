import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';
import { REDIS_AUTH_ENV, checkRedisAuth } from '@checkout/stock-gate';

/** The inventory service's settings. */
export const InventoryConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
  /** How long a reservation holds stock; keep it above the p99 time to pay (3DS included). */
  INVENTORY_RESERVATION_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /**
   * The longest the expiry job sleeps: it wakes when the earliest held reservation expires (this process's reserve
   * command says when), and at least this often for what another replica held.
   */
  INVENTORY_EXPIRY_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /** Reservation rows one expiry statement moves at most. */
  INVENTORY_EXPIRY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /** order.created events reserved in one transaction at most (group commit of a hot SKU's orders). */
  INVENTORY_RESERVE_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(100),
  /** The hot-SKU gate's Redis; without it the gate re-sync job does not run. */
  REDIS_URL: z.string().url().optional(),
  /** How often every gated SKU's Redis counter is reset from the database (0 turns it off). */
  INVENTORY_GATE_RESYNC_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  /** How often the drift job compares counters with the ledgers (0 turns it off). */
  INVENTORY_DRIFT_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
})
  // The gate's Redis credentials: their own block, next to the Kafka one of the base config.
  .extend(REDIS_AUTH_ENV)
  .superRefine(checkRedisAuth);
export type InventoryConfig = z.infer<typeof InventoryConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadInventoryConfig = (env: NodeJS.ProcessEnv = process.env): InventoryConfig =>
  parseConfig(InventoryConfigSchema, env);
