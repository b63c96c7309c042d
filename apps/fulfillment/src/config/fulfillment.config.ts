import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

/** A comma-separated list of patterns (`SKU-1`, `UNSHIPPABLE-*`); empty means none. */
const PatternList = z
  .string()
  .default('')
  .transform((raw) =>
    raw
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p.length > 0),
  );

/** The fulfillment service's settings. */
export const FulfillmentConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
  /** Name of the (simulated) carrier written on shipments and shipment events. */
  CARRIER_NAME: z.string().min(1).max(64).default('sim-post'),
  /** SKUs the carrier refuses to ship (exact, or a prefix ending in `*`). */
  CARRIER_FAIL_SKUS: PatternList,
  /** Customers whose address the carrier cannot deliver to (exact, or a prefix ending in `*`). */
  CARRIER_FAIL_CUSTOMERS: PatternList,
  /** How often the notifier step sends pending notifications; while it finds none the pause doubles up to the idle one. */
  NOTIFIER_INTERVAL_MS: z.coerce.number().int().min(20).default(500),
  NOTIFIER_IDLE_INTERVAL_MS: z.coerce.number().int().min(20).default(5_000),
  /** Notifications one notifier pass sends at most. */
  NOTIFIER_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(100),
  /** Discount of the voucher in the "paid but out of stock" apology. */
  APOLOGY_VOUCHER_PERCENT_OFF: z.coerce.number().int().min(1).max(100).default(10),
});
export type FulfillmentConfig = z.infer<typeof FulfillmentConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadFulfillmentConfig = (env: NodeJS.ProcessEnv = process.env): FulfillmentConfig =>
  parseConfig(FulfillmentConfigSchema, env);
