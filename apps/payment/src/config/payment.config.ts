import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

const ms = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** The payment service's settings. */
export const PaymentConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
  /** Base URL of the PSP. */
  PSP_URL: z.string().url(),
  /** Our timeout for one PSP request: short, a few seconds at most; a timeout means `unknown`. */
  PAYMENT_PSP_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(3_000),
  /** Retries of one PSP request after a timeout, 5xx or dropped connection (always with the same key). */
  PAYMENT_PSP_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Consecutive PSP failures of one account that open its circuit breaker. */
  PAYMENT_BREAKER_THRESHOLD: z.coerce.number().int().min(1).default(5),
  /** How long an open breaker waits before letting one request through. */
  PAYMENT_BREAKER_HALF_OPEN_MS: ms(5_000),
  /** How often the charge worker looks for new attempts (it is also woken by the consumer). */
  PAYMENT_CHARGE_POLL_MS: z.coerce.number().int().min(10).default(200),
  /** PSP charge requests in flight at once. */
  PAYMENT_CHARGE_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(32),
  /** Accepted clock skew and replay window of a webhook signature. */
  PAYMENT_WEBHOOK_TOLERANCE_S: z.coerce.number().int().min(1).default(300),
  /** How often reconciliation runs, and how long an attempt may sit in pending/unknown before it is queried. */
  PAYMENT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  PAYMENT_RECONCILE_AFTER_MS: z.coerce.number().int().min(0).default(60_000),
  /** The orphaned-charge sweep: how often, how far back, and how old a charge must be before it counts. */
  PAYMENT_ORPHAN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
  PAYMENT_ORPHAN_WINDOW_MS: ms(86_400_000),
  PAYMENT_ORPHAN_MIN_AGE_MS: ms(600_000),
  /** What to do with a captured charge that has no succeeded payment of ours: refund it, or only flag it. */
  PAYMENT_ORPHAN_POLICY: z.enum(['refund', 'flag']).default('refund'),
  /** Refund retries: attempts before the refund is parked as `refund_failed`, and the backoff between them. */
  PAYMENT_REFUND_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(8),
  PAYMENT_REFUND_BACKOFF_MS: z.coerce.number().int().min(10).default(1_000),
  PAYMENT_REFUND_BACKOFF_MAX_MS: z.coerce.number().int().min(10).default(300_000),
  PAYMENT_REFUND_POLL_MS: z.coerce.number().int().min(10).default(250),
});
export type PaymentConfig = z.infer<typeof PaymentConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadPaymentConfig = (env: NodeJS.ProcessEnv = process.env): PaymentConfig =>
  parseConfig(PaymentConfigSchema, env);
