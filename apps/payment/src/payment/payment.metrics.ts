import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ScrapeProbe } from '@checkout/messaging';
import { METRICS_REGISTRY } from '@checkout/service-kit';

/** The payment service's own Prometheus metrics. */
@Injectable()
export class PaymentMetrics {
  readonly transitions: Counter<'to' | 'source' | 'outcome'>;
  readonly pspRequests: Counter<'operation' | 'outcome'>;
  readonly pspDuration: Histogram<'operation'>;
  readonly webhooks: Counter<'outcome'>;
  readonly stuck: Gauge<'state'>;
  readonly stuckOldest: Gauge<'state'>;
  readonly refundsParked: Gauge;
  readonly refundsParkedTotal: Counter;
  readonly orphans: Counter<'action'>;
  readonly breakerOpen: Gauge<'account'>;
  readonly pspEventsPruned: Counter;
  /** What fills the stuck and parked gauges when /metrics is scraped (set by the reconciliation job). */
  private readOpenStates?: () => Promise<void>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    const registers = [registry];
    this.transitions = new Counter({
      name: 'payment_transitions_total',
      help: 'Requested state machine moves by target state, source and outcome (applied/ignored)',
      labelNames: ['to', 'source', 'outcome'],
      registers,
    });
    this.pspRequests = new Counter({
      name: 'payment_psp_requests_total',
      help: 'PSP calls by operation and outcome (ok, rejected, unavailable)',
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.pspDuration = new Histogram({
      name: 'payment_psp_request_duration_seconds',
      help: 'Time of one PSP call, retries included',
      labelNames: ['operation'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.webhooks = new Counter({
      name: 'payment_webhooks_total',
      help: 'PSP webhooks by outcome (applied, ignored, duplicate, unmatched, rejected)',
      labelNames: ['outcome'],
      registers,
    });
    this.stuck = new Gauge({
      name: 'payment_stuck_attempts',
      help: 'Attempts in created/pending/unknown longer than the reconciliation threshold (created: the charge worker is behind)',
      labelNames: ['state'],
      registers,
      collect: () => this.readOpenStates?.(),
    });
    this.stuckOldest = new Gauge({
      name: 'payment_stuck_oldest_seconds',
      help: 'Age of the oldest attempt in created/pending/unknown',
      labelNames: ['state'],
      registers,
      collect: () => this.readOpenStates?.(),
    });
    this.refundsParked = new Gauge({
      name: 'payment_refunds_failed',
      help: 'Refunds parked in refund_failed, waiting for an operator',
      registers,
      collect: () => this.readOpenStates?.(),
    });
    this.refundsParkedTotal = new Counter({
      name: 'payment_refunds_parked_total',
      help: 'Refunds that ran out of attempts and were parked in refund_failed',
      registers,
    });
    this.orphans = new Counter({
      name: 'payment_orphan_charges_total',
      help: 'Captured PSP charges without a succeeded payment of ours, by action taken',
      labelNames: ['action'],
      registers,
    });
    this.breakerOpen = new Gauge({
      name: 'payment_psp_breaker_open',
      help: '1 while the circuit breaker of a PSP account is open',
      labelNames: ['account'],
      registers,
    });
    this.pspEventsPruned = new Counter({
      name: 'payment_psp_events_pruned_total',
      help: 'Webhook dedupe rows (psp_event) deleted past PAYMENT_PSP_EVENT_RETENTION_MS',
      registers,
    });
  }

  /** Fills the stuck and parked gauges from this probe when /metrics is scraped. */
  readOpenStatesWith(probe: ScrapeProbe): void {
    this.readOpenStates = () => probe.refresh();
  }
}
