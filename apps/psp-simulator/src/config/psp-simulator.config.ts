import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';

const ms = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** The simulator's settings: where webhooks go, the timing of each token behaviour, chaos knobs. */
export const PspSimulatorConfigSchema = BaseConfigSchema.extend({
  /** Base URL of the payment service; webhooks go to `${PAYMENT_URL}/v1/psp/webhooks`. */
  PAYMENT_URL: z.string().url(),
  /** Added to every charge and refund before it is processed (benchmarks). */
  PSP_SIM_LATENCY_MS: ms(0),
  /** Uniform random jitter on top of the latency. */
  PSP_SIM_LATENCY_JITTER_MS: ms(0),
  /** Share of charge and refund requests answered 500 (0..1). */
  PSP_SIM_ERROR_RATE: z.coerce.number().min(0).max(1).default(0),
  /** `before`: the failing request does nothing; `after`: it is processed and the answer is lost anyway. */
  PSP_SIM_ERROR_MODE: z.enum(['before', 'after']).default('before'),
  /** Delay of the ordinary webhook after a charge settles. */
  PSP_SIM_WEBHOOK_DELAY_MS: ms(200),
  /** tok_timeout_*: how long each response hangs (past the caller's timeout). */
  PSP_SIM_HANG_MS: ms(35_000),
  /** tok_timeout_*: when the webhook follows the charge. */
  PSP_SIM_TIMEOUT_WEBHOOK_DELAY_MS: ms(5_000),
  /** tok_3ds: how long the customer takes; then the charge succeeds and the webhook is sent. */
  PSP_SIM_3DS_DELAY_MS: ms(5_000),
  /** tok_webhook_late: when the charge settles and its webhook arrives (past the reservation TTL). */
  PSP_SIM_LATE_WEBHOOK_DELAY_MS: ms(660_000),
  /** tok_webhook_lost: when the charge settles at the PSP (no webhook follows). */
  PSP_SIM_LOST_SETTLE_MS: ms(200),
  /**
   * Journal of the simulator's state (JSON lines): set, a restarted simulator still knows every charge, refund
   * and Idempotency-Key, as a real PSP would after an outage. Unset, the state lives in memory only.
   */
  PSP_SIM_STATE_FILE: z.string().min(1).optional(),
  /** Delivery attempts of one webhook when the receiver does not answer 2xx. */
  PSP_SIM_WEBHOOK_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
});
export type PspSimulatorConfig = z.infer<typeof PspSimulatorConfigSchema>;

/** Reads and validates the environment once at boot. */
export const loadPspSimulatorConfig = (env: NodeJS.ProcessEnv = process.env): PspSimulatorConfig =>
  parseConfig(PspSimulatorConfigSchema, env);
