import { StackConfig } from '@checkout/local-stack';
import { SagaEvents } from '@checkout/e2e';
import { TopicReader } from '@checkout/testing';

/** Settings of a chaos run (`npm run chaos -- --help` lists the flags). */
export interface ChaosOptions {
  /** Checkouts per fault case. */
  orders: number;
  /** Checkouts started per second. */
  rate: number;
  /** How long a killed part stays down before it is started again. */
  downMs: number;
  /** Deadline for every saga of a case to end once the fault is over (else it counts as stuck). */
  settleMs: number;
  /** Soak length and rate. */
  soakMs: number;
  soakRate: number;
  /** The soak restarts the outbox services with this outbox and idempotency retention (0: the stack's own). */
  soakRetentionMs: number;
  /** Only these cases of a scenario (by name); all when empty. */
  cases: string[];
}

/** Defaults: a few hundred checkouts per case, a soak of 10 minutes (PRODUCT/issue 18). */
export const DEFAULT_OPTIONS: ChaosOptions = {
  orders: 300,
  rate: 10,
  downMs: 5_000,
  settleMs: 240_000,
  soakMs: 10 * 60_000,
  soakRate: 4,
  soakRetentionMs: 120_000,
  cases: [],
};

/** What every scenario runs with: the stack's settings, one Kafka reader for the whole run, the options. */
export interface ChaosContext {
  config: StackConfig;
  /** Every saga topic and its DLQ from the beginning: the lost-event check reads it. */
  reader: TopicReader;
  /** Handed to the workload's SagaScenario (its event helpers are not used by the chaos checks). */
  events: SagaEvents;
  options: ChaosOptions;
  log: (line: string) => void;
}
