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
  /**
   * The charge worker's pause between passes while it finds attempts. The inventory.reserved consumer wakes it
   * after each commit and a restart looks at once, so an idle worker doubles its pause up to
   * PAYMENT_CHARGE_IDLE_POLL_MS, a safety net for attempts a crashed replica recorded and never charged.
   */
  PAYMENT_CHARGE_POLL_MS: z.coerce.number().int().min(10).default(200),
  PAYMENT_CHARGE_IDLE_POLL_MS: z.coerce.number().int().min(10).default(30_000),
  /** inventory.reserved events recorded in one transaction at most (the batched consumer). */
  PAYMENT_ATTEMPT_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /** PSP charge requests in flight at once. */
  PAYMENT_CHARGE_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(32),
  /** Accepted clock skew and replay window of a webhook signature. */
  PAYMENT_WEBHOOK_TOLERANCE_S: z.coerce.number().int().min(1).default(300),
  /**
   * How long an attempt may sit in pending/unknown before the PSP is asked about it (reconciliation runs when the
   * oldest falls due), and the longest reconciliation sleeps when nothing it knows of is due.
   */
  PAYMENT_RECONCILE_AFTER_MS: z.coerce.number().int().min(0).default(60_000),
  PAYMENT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * The orphaned-charge sweep: the longest it sleeps (a webhook about a charge we did not take wakes it once the
   * charge is old enough), how far back it looks, and how old a charge must be before it counts.
   */
  PAYMENT_ORPHAN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
  PAYMENT_ORPHAN_WINDOW_MS: ms(86_400_000),
  PAYMENT_ORPHAN_MIN_AGE_MS: ms(600_000),
  /** What to do with a captured charge that has no succeeded payment of ours: refund it, or only flag it. */
  PAYMENT_ORPHAN_POLICY: z.enum(['refund', 'flag']).default('refund'),
  /** Refund retries: attempts before the refund is parked as `refund_failed`, and the backoff between them. */
  PAYMENT_REFUND_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(8),
  PAYMENT_REFUND_BACKOFF_MS: z.coerce.number().int().min(10).default(1_000),
  PAYMENT_REFUND_BACKOFF_MAX_MS: z.coerce.number().int().min(10).default(300_000),
  /**
   * The longest the refund worker sleeps: it wakes when a refund request commits (LISTEN/NOTIFY) and when the
   * earliest pending refund falls due, so this only bounds a lost wake-up.
   */
  PAYMENT_REFUND_MAX_SLEEP_MS: z.coerce.number().int().min(250).default(30_000),
  /**
   * How long the PSP may still (re)deliver a webhook event after it first sent it: its retry schedule (Stripe
   * retries for up to three days). The simulator gives up after PSP_SIM_WEBHOOK_ATTEMPTS, about a minute.
   */
  PAYMENT_PSP_REDELIVERY_WINDOW_MS: ms(3 * 86_400_000),
  /**
   * How long a received PSP event id is kept for dedupe. It must exceed the redelivery window plus the signature
   * tolerance, or a late redelivery would no longer be recognised (the state machine would still ignore a stale
   * outcome, but the dedupe row is the first guard). Checked at boot.
   */
  PAYMENT_PSP_EVENT_RETENTION_MS: ms(30 * 86_400_000),
  /** How often old PSP event ids are deleted, and how many rows per DELETE and per pass at most. */
  PAYMENT_PSP_EVENT_PRUNE_INTERVAL_MS: z.coerce.number().int().min(100).default(3_600_000),
  PAYMENT_PSP_EVENT_PRUNE_BATCH: z.coerce.number().int().min(1).max(100_000).default(1_000),
  PAYMENT_PSP_EVENT_PRUNE_MAX_BATCHES: z.coerce.number().int().min(1).max(10_000).default(50),
}).refine(
  (c) =>
    c.PAYMENT_PSP_EVENT_RETENTION_MS >
    c.PAYMENT_PSP_REDELIVERY_WINDOW_MS + c.PAYMENT_WEBHOOK_TOLERANCE_S * 1000,
  {
    path: ['PAYMENT_PSP_EVENT_RETENTION_MS'],
    message:
      'must exceed PAYMENT_PSP_REDELIVERY_WINDOW_MS + PAYMENT_WEBHOOK_TOLERANCE_S: a redelivered event must still be recognised',
  },
);
export type PaymentConfig = z.infer<typeof PaymentConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadPaymentConfig = (env: NodeJS.ProcessEnv = process.env): PaymentConfig =>
  parseConfig(PaymentConfigSchema, env);
