import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@checkout/service-kit';

/**
 * Every answer a checkout can get past the tenant guard, as the `outcome` label of order_checkouts_total:
 * created, replayed, each stable error code, and `error` for an unexpected failure (500). All start at 0,
 * so a dashboard sees a rate for each. (401 and body-parser answers happen before routing.)
 */
export const CHECKOUT_OUTCOMES = [
  'accepted',
  'replayed',
  'VALIDATION_FAILED',
  'UNKNOWN_SKU',
  'UNKNOWN_VOUCHER',
  'PRICE_CHANGED',
  'OUT_OF_STOCK',
  'VOUCHER_EXHAUSTED',
  'IDEMPOTENCY_KEY_IN_USE',
  'IDEMPOTENCY_KEY_REUSED',
  'GATE_TIMEOUT',
  'ORDER_TOTAL_TOO_LARGE',
  'ZERO_TOTAL',
  'error',
] as const;
export type CheckoutOutcome = (typeof CHECKOUT_OUTCOMES)[number];

/** The checkout's metrics: order_checkouts_total by outcome. */
@Injectable()
export class CheckoutMetrics {
  private readonly outcomes: Counter<'outcome'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.outcomes = new Counter({
      name: 'order_checkouts_total',
      help: 'Checkout requests by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    });
    for (const outcome of CHECKOUT_OUTCOMES) this.outcomes.inc({ outcome }, 0);
  }

  /** Counts one answer. */
  count(outcome: CheckoutOutcome): void {
    this.outcomes.inc({ outcome });
  }
}
