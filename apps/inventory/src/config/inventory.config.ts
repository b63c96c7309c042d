import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

/** The inventory service's settings. */
export const InventoryConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
});
export type InventoryConfig = z.infer<typeof InventoryConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadInventoryConfig = (env: NodeJS.ProcessEnv = process.env): InventoryConfig => parseConfig(InventoryConfigSchema, env);
