import { Logger } from './logger';

/**
 * Runs one async pass every `intervalMs` (the next pass is scheduled when the previous one ends, so passes never
 * overlap); a failing pass is logged and the schedule goes on. `stop()` waits for the pass in flight.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<void>;
  private stopped = true;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly pass: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** One pass now (or the one already running); never throws. */
  runOnce(): Promise<void> {
    this.inFlight ??= this.pass()
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.error({ task: this.name, err: String(error) }, 'periodic task failed'),
      )
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runOnce().then(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
