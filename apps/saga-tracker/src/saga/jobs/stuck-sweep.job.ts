import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SweepStuckSagas } from '../commands/sweep-stuck/sweep-stuck.handler';
import { ReadHorizon } from './read-horizon';

/**
 * Runs the stuck-saga sweep every SAGA_STUCK_SWEEP_INTERVAL_MS, as of how far the tracker has read (the read
 * horizon); a sweep never overlaps the previous one.
 */
@Injectable()
export class StuckSweepJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly sweep: SweepStuckSagas,
    private readonly horizon: ReadHorizon,
    private readonly logger: PinoLogger,
    private readonly intervalMs: number,
  ) {
    logger.setContext('StuckSweepJob');
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.horizon.close().catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.intervalMs);
  }

  private async pass(): Promise<void> {
    try {
      const asOf = await this.horizon.sample().catch((error: unknown) => {
        this.logger.warn(
          { err: String(error) },
          'read horizon unknown (Kafka admin); no saga judged this round',
        );
        return null;
      });
      await this.sweep.execute(asOf);
    } catch (error) {
      this.logger.error({ err: String(error) }, 'stuck sweep failed');
    }
  }
}
