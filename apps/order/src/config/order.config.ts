import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

/** The order service's settings. */
export const OrderConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
});
export type OrderConfig = z.infer<typeof OrderConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadOrderConfig = (env: NodeJS.ProcessEnv = process.env): OrderConfig => parseConfig(OrderConfigSchema, env);
