import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { PeriodicTask, SERVICE_CONFIG } from '@checkout/service-kit';
import { SweepStuckSagasHandler } from '../commands/sweep-stuck/sweep-stuck.handler';
import { SagaTrackerConfig } from '../../config/saga-tracker.config';
import { ReadHorizon } from './read-horizon';

/**
 * Runs the stuck-saga sweep every SAGA_STUCK_SWEEP_INTERVAL_MS, as of how far the tracker has read (the read
 * horizon); a sweep never overlaps the previous one.
 */
@Injectable()
export class StuckSweepJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly sweep: SweepStuckSagasHandler,
    private readonly horizon: ReadHorizon,
    private readonly logger: PinoLogger,
    @Inject(SERVICE_CONFIG) config: Pick<SagaTrackerConfig, 'SAGA_STUCK_SWEEP_INTERVAL_MS'>,
  ) {
    logger.setContext('StuckSweepJob');
    this.task = new PeriodicTask(
      'stuck-sweep',
      config.SAGA_STUCK_SWEEP_INTERVAL_MS,
      () => this.pass(),
      logger.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
    await this.horizon.close().catch(() => undefined);
  }

  private async pass(): Promise<void> {
    // At rest nothing is open: no horizon to sample (16 topics' end offsets and the group's commits).
    if (!(await this.sweep.mayFindStuck(new Date()))) {
      await this.sweep.execute(null);
      return;
    }
    const asOf = await this.horizon.sample().catch((error: unknown) => {
      this.logger.warn({ err: String(error) }, 'read horizon unknown (Kafka); no saga judged this round');
      return null;
    });
    await this.sweep.execute(asOf);
  }
}
