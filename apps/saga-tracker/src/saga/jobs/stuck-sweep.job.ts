import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SweepStuckSagas } from '../commands/sweep-stuck/sweep-stuck.handler';

/** Runs the stuck-saga sweep every SAGA_STUCK_SWEEP_INTERVAL_MS; a sweep never overlaps the previous one. */
@Injectable()
export class StuckSweepJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly sweep: SweepStuckSagas,
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
      await this.sweep.execute();
    } catch (error) {
      this.logger.error({ err: String(error) }, 'stuck sweep failed');
    }
  }
}
