import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';
import { REDIS_AUTH_ENV, checkRedisAuth } from '@checkout/stock-gate';

/** The order service's settings. */
export const OrderConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
  /** The flash-sale gate's Redis. */
  REDIS_URL: z.string().url(),
  /**
   * How long a gate command waits for Redis' reply once sent. A Redis that is down is noticed at once (no
   * offline queue); this only bounds a slow reply, after which a checkout's take is unknown (503 GATE_TIMEOUT).
   */
  GATE_REPLY_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** Inventory's HTTP API, read to prime a flash sale from the available stock. */
  INVENTORY_URL: z.string().url(),
  INVENTORY_TIMEOUT_MS: z.coerce.number().int().min(100).default(2_000),
  /** How long a completed Idempotency-Key is replayed before the cleanup job deletes it. */
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce.number().min(0.001).default(24),
  /** How long a request may hold a key in `processing` before another request may take it over (crash). */
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * How often the flash sales that are on are checked for a lost Redis counter (it is also checked at once
   * whenever the gate's connection comes back); 0 turns the re-arm off.
   */
  ORDER_GATE_REARM_INTERVAL_MS: z.coerce.number().int().min(0).default(15_000),
  IDEMPOTENCY_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(1_000).default(600_000),
})
  // The gate's Redis credentials: their own block, next to the Kafka one of the base config.
  .extend(REDIS_AUTH_ENV)
  .superRefine(checkRedisAuth);
export type OrderConfig = z.infer<typeof OrderConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadOrderConfig = (env: NodeJS.ProcessEnv = process.env): OrderConfig =>
  parseConfig(OrderConfigSchema, env);
