import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

/** The fulfillment service's settings. */
export const FulfillmentConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
});
export type FulfillmentConfig = z.infer<typeof FulfillmentConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadFulfillmentConfig = (env: NodeJS.ProcessEnv = process.env): FulfillmentConfig =>
  parseConfig(FulfillmentConfigSchema, env);
