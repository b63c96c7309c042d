import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY, TenantRegistry } from '@checkout/service-kit';
import { OrderStatus, StepOutcome } from './domain';
import { WAIT_STEP_NAMES, stuckCounts } from './database/saga.repository';

/** The tracker's metrics: steps recorded, stuck sagas now (read at scrape time), saga durations. */
@Injectable()
export class SagaMetrics {
  private readonly steps: Counter<'type' | 'outcome'>;
  private readonly duration: Histogram<'tenant' | 'status'>;
  private readonly becameStuck: Counter<'tenant' | 'waiting_for'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry, dataSource: DataSource, tenants: TenantRegistry) {
    this.steps = new Counter({
      name: 'saga_steps_recorded_total',
      help: 'Saga events recorded as timeline steps, by type and outcome class (a retried handler may count twice)',
      labelNames: ['type', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'saga_duration_seconds',
      help: 'From the first step of a saga to the step that ended it, observed once when the saga ends, by final status',
      labelNames: ['tenant', 'status'],
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
      registers: [registry],
    });
    this.becameStuck = new Counter({
      name: 'saga_became_stuck_total',
      help: 'Sagas the sweep marked stuck, by tenant and the step they wait for',
      labelNames: ['tenant', 'waiting_for'],
      registers: [registry],
    });
    const gauge = new Gauge({
      name: 'saga_stuck_sagas',
      help: 'Sagas stuck now (not ended, next step or whole saga overdue), by tenant and the step they wait for',
      labelNames: ['tenant', 'waiting_for'],
      registers: [registry],
      collect: async () => {
        const counts = await stuckCounts(dataSource).catch(() => null);
        if (!counts) return; // a scrape while the DB is away keeps the last values
        gauge.reset();
        for (const t of tenants.all())
          for (const step of WAIT_STEP_NAMES) gauge.set({ tenant: t.id, waiting_for: step }, 0);
        for (const c of counts)
          gauge.set({ tenant: c.tenantId, waiting_for: c.waitingStep ?? 'none' }, c.count);
      },
    });
  }

  /** Counts one recorded step. */
  stepRecorded(type: string, outcome: StepOutcome): void {
    this.steps.inc({ type, outcome });
  }

  /** Observes the duration of a saga that ended. */
  sagaEnded(tenant: string, status: OrderStatus, seconds: number): void {
    this.duration.observe({ tenant, status }, seconds);
  }

  /** Counts a saga that became stuck. */
  sagaStuck(tenant: string, waitingFor: string): void {
    this.becameStuck.inc({ tenant, waiting_for: waitingFor });
  }
}
