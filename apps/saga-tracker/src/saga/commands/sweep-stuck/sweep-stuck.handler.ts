import { DataSource } from 'typeorm';
import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { SagaTrackerConfig } from '../../../config/saga-tracker.config';
import { STUCK_TIMEOUTS } from '../../saga.tokens';
import { OrderStatus, StuckTimeouts, stuckVerdict } from '../../domain';
import { SagaMetrics } from '../../saga.metrics';
import {
  SagaRow,
  claimEndedDurations,
  markStuck,
  stuckCandidates,
  waitingOf,
} from '../../database/saga.repository';

/** What one sweep did. */
export interface SweepResult {
  /** The instant the sagas were judged as of (how far the tracker had read), or null: nobody judged. */
  asOf: Date | null;
  becameStuck: SagaRow[];
  durationsObserved: number;
}

/**
 * SweepStuckSagasHandler: marks the sagas whose next step (or whole run) is overdue as stuck, with one log line per
 * saga as it becomes stuck, and observes the duration of the sagas that ended since the last sweep. Sagas are
 * judged as of the instant up to which the tracker has read every topic (`asOf`), never later.
 */
@Injectable()
export class SweepStuckSagasHandler {
  private readonly batch: number;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(STUCK_TIMEOUTS) private readonly timeouts: StuckTimeouts,
    private readonly metrics: SagaMetrics,
    private readonly logger: PinoLogger,
    @Inject(SERVICE_CONFIG) config: Pick<SagaTrackerConfig, 'SAGA_STUCK_SWEEP_BATCH'>,
  ) {
    logger.setContext('SweepStuckSagas');
    this.batch = config.SAGA_STUCK_SWEEP_BATCH;
  }

  /**
   * Whether any open saga could be judged stuck as of `now` (or any earlier instant: a saga that is no candidate
   * now was none before). When none could, the sweep needs no read horizon (which costs Kafka requests).
   */
  async mayFindStuck(now: Date): Promise<boolean> {
    const shortest = Math.min(...Object.values(this.timeouts.steps));
    return (await stuckCandidates(this.dataSource, now, shortest, this.timeouts.overallMs, 1)).length > 0;
  }

  async execute(asOf: Date | null): Promise<SweepResult> {
    const ended = await claimEndedDurations(this.dataSource, this.batch);
    for (const e of ended) this.metrics.sagaEnded(e.tenantId, e.status as OrderStatus, e.seconds);
    if (asOf === null) return { asOf, becameStuck: [], durationsObserved: ended.length };
    const now = asOf;
    const shortest = Math.min(...Object.values(this.timeouts.steps));
    const candidates = await stuckCandidates(
      this.dataSource,
      now,
      shortest,
      this.timeouts.overallMs,
      this.batch,
    );
    const becameStuck: SagaRow[] = [];
    for (const saga of candidates) {
      const verdict = stuckVerdict(
        {
          terminal: saga.terminal,
          startedAt: saga.startedAt,
          waitingFor: waitingOf(saga),
        },
        now,
        this.timeouts,
      );
      if (!verdict.stuck || !(await markStuck(this.dataSource, saga, now, verdict.reason!))) continue;
      becameStuck.push({ ...saga, stuck: true, stuckSince: now, stuckReason: verdict.reason });
      this.metrics.sagaStuck(saga.tenantId, saga.waitingStep ?? 'none');
      this.logger.warn(
        {
          orderId: saga.sagaId,
          tenantId: saga.tenantId,
          status: saga.status,
          lastStep: saga.lastType,
          lastService: saga.lastService,
          lastStepAt: saga.lastOccurredAt.toISOString(),
          waitingFor: saga.waitingStep,
          waitingForService: saga.waitingService,
          waitedMs: verdict.waitedMs,
          reason: verdict.reason,
        },
        'saga stuck',
      );
    }
    return { asOf, becameStuck, durationsObserved: ended.length };
  }
}
