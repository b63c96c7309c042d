import { z } from 'zod';
import { BaseConfigSchema, parseConfig } from '@checkout/service-kit';
import { StuckTimeouts, WaitStep, stepTimeouts } from '../saga/domain';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const MINUTE = 60_000;

/** The saga tracker's settings: its database, the stuck-saga timeouts and how often the sweep runs. */
export const SagaTrackerConfigSchema = BaseConfigSchema.extend({
  DATABASE_URL: z.string().url(),
  /** A saga not ended this long after its first step is stuck, whatever step it is at. */
  SAGA_STUCK_AFTER_MS: ms(30 * MINUTE),
  /** Waiting for inventory's answer after order.created. */
  SAGA_STEP_TIMEOUT_RESERVATION_MS: ms(MINUTE),
  /** Waiting for payment's answer after inventory.reserved (PSP timeout, retries and reconciliation). */
  SAGA_STEP_TIMEOUT_PAYMENT_MS: ms(10 * MINUTE),
  /** Waiting for inventory to commit (or refuse) the stock after payment.succeeded. */
  SAGA_STEP_TIMEOUT_STOCK_COMMIT_MS: ms(MINUTE),
  /** Waiting for order.paid once money and stock are both in. */
  SAGA_STEP_TIMEOUT_ORDER_PAID_MS: ms(MINUTE),
  /** Waiting for fulfillment's shipment after order.paid. */
  SAGA_STEP_TIMEOUT_SHIPMENT_MS: ms(5 * MINUTE),
  /** Waiting for the order to cancel (order.cancelled) after a declined payment. */
  SAGA_STEP_TIMEOUT_ORDER_CANCEL_MS: ms(MINUTE),
  /** Waiting for a refund (money taken for an order that cannot be served). */
  SAGA_STEP_TIMEOUT_REFUND_MS: ms(15 * MINUTE),
  /** Waiting for inventory to release the reservation of a cancelled order. */
  SAGA_STEP_TIMEOUT_STOCK_RELEASE_MS: ms(5 * MINUTE),
  /** Waiting for fulfillment to call back the shipment of a refunded order. */
  SAGA_STEP_TIMEOUT_SHIPMENT_CANCEL_MS: ms(5 * MINUTE),
  /** How often the sweep marks overdue sagas stuck and observes the durations of ended ones. */
  SAGA_STUCK_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).default(5_000),
  /** Sagas one sweep looks at, at most. */
  SAGA_STUCK_SWEEP_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /**
   * How long the broker gathers events for the tracker before it answers a fetch (0: at the first event). The
   * tracker is off the saga's path, and one transaction per gathered batch costs less than one per event:
   * bench:saga at 10 checkouts/s, tracker CPU per saga 27-29 ms at 0, 13-15 at 250, 8 at 1000, 5.7 at 2000. It
   * gathers only while events come: after a fetch that brought none, the next one is answered at the first event
   * (or after FETCH_MAX_WAIT_MS, 5 s, with none), so an idle tracker fetches every 5 s, not every 2 s.
   */
  SAGA_FETCH_GATHER_MS: z.coerce.number().int().min(0).max(5_000).default(2_000),
});
export type SagaTrackerConfig = z.infer<typeof SagaTrackerConfigSchema>;

/** Reads and validates the environment once at boot; throws naming every bad variable. */
export const loadSagaTrackerConfig = (env: NodeJS.ProcessEnv = process.env): SagaTrackerConfig =>
  parseConfig(SagaTrackerConfigSchema, env);

/** Bytes a gathered fetch waits for at most: far more than the tracker's topics carry in SAGA_FETCH_GATHER_MS. */
const GATHER_BYTES = 4 * 1024 * 1024;

/** How the tracker's consumers fetch (ConsumersOptions.fetch): gathered for SAGA_FETCH_GATHER_MS, or at once. */
export const fetchOf = (config: SagaTrackerConfig) =>
  config.SAGA_FETCH_GATHER_MS > 0
    ? { minBytes: GATHER_BYTES, maxWaitTimeInMs: config.SAGA_FETCH_GATHER_MS }
    : undefined;

/** The stuck timeouts of a configuration, one per wait step. */
export function stuckTimeoutsOf(config: SagaTrackerConfig): StuckTimeouts {
  const steps: Record<WaitStep, number> = {
    reservation: config.SAGA_STEP_TIMEOUT_RESERVATION_MS,
    payment: config.SAGA_STEP_TIMEOUT_PAYMENT_MS,
    'stock-commit': config.SAGA_STEP_TIMEOUT_STOCK_COMMIT_MS,
    'order-paid': config.SAGA_STEP_TIMEOUT_ORDER_PAID_MS,
    shipment: config.SAGA_STEP_TIMEOUT_SHIPMENT_MS,
    'order-cancel': config.SAGA_STEP_TIMEOUT_ORDER_CANCEL_MS,
    refund: config.SAGA_STEP_TIMEOUT_REFUND_MS,
    'stock-release': config.SAGA_STEP_TIMEOUT_STOCK_RELEASE_MS,
    'shipment-cancel': config.SAGA_STEP_TIMEOUT_SHIPMENT_CANCEL_MS,
  };
  return { overallMs: config.SAGA_STUCK_AFTER_MS, steps: stepTimeouts(steps) };
}
