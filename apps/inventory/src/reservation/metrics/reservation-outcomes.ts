import { Counter, Registry } from 'prom-client';
import {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';

/** What happened to a reservation (an order's stock), as counted on /metrics. */
export type ReservationOutcome =
  'reserved' | 'rejected' | 'released' | 'committed' | 'backordered' | 'unavailable_after_payment';

interface PendingOutcome {
  tenant: string;
  outcome: ReservationOutcome;
  reason: string;
}

const PENDING = 'reservationOutcomes';

/**
 * Notes an outcome in the transaction that decides it; it is counted only once that transaction commits, so
 * an attempt rolled back and retried (deadlock, lost connection, a batch split after a poison event) is
 * counted once. Without a subscriber on the DataSource (specs, benchmarks) it counts nothing.
 */
export function recordOutcome(
  tx: EntityManager,
  tenant: string,
  outcome: ReservationOutcome,
  reason = 'none',
  times = 1,
): void {
  const data = tx.queryRunner?.data as Record<string, PendingOutcome[] | undefined> | undefined;
  if (!data) return;
  const pending = (data[PENDING] ??= []);
  for (let i = 0; i < times; i += 1) pending.push({ tenant, outcome, reason });
}

/**
 * `inventory_reservation_outcomes_total{tenant, outcome, reason}`: reserved, rejected (insufficient_stock,
 * unknown_sku), released (payment_failed, order_cancelled, expired), committed (held, re_reserved,
 * backorder_filled), backordered, unavailable_after_payment. One per order and outcome.
 */
export class ReservationOutcomes implements EntitySubscriberInterface {
  readonly counter: Counter<'tenant' | 'outcome' | 'reason'>;

  constructor(registry: Registry) {
    this.counter = new Counter({
      name: 'inventory_reservation_outcomes_total',
      help: 'Reservation outcomes by kind and reason, counted when the transaction that decided them commits',
      labelNames: ['tenant', 'outcome', 'reason'],
      registers: [registry],
    });
  }

  /** Starts counting the outcomes of this DataSource's transactions. */
  attach(dataSource: DataSource): this {
    if (!dataSource.subscribers.includes(this)) dataSource.subscribers.push(this);
    return this;
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint released: the transaction goes on
    const data = event.queryRunner.data as Record<string, PendingOutcome[] | undefined>;
    for (const o of data[PENDING] ?? [])
      this.counter.inc({ tenant: o.tenant, outcome: o.outcome, reason: o.reason });
    data[PENDING] = undefined;
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (event.queryRunner.isTransactionActive) return;
    (event.queryRunner.data as Record<string, unknown>)[PENDING] = undefined;
  }
}
