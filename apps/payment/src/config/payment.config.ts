import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

/** The payment service's settings. */
export const PaymentConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
});
export type PaymentConfig = z.infer<typeof PaymentConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadPaymentConfig = (env: NodeJS.ProcessEnv = process.env): PaymentConfig => parseConfig(PaymentConfigSchema, env);
