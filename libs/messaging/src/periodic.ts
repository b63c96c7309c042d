import { Logger } from './logger';

/** How a polling worker slows down while it finds nothing (see PeriodicTask). */
export interface IdleBackoff {
  /** The longest pause between two passes that found nothing; the pause doubles from `intervalMs` up to it. */
  maxMs: number;
}

/**
 * Runs one async pass every `intervalMs` (the next pass is scheduled when the previous one ends, so passes never
 * overlap); a failing pass is logged and the schedule goes on. `stop()` waits for the pass in flight.
 * With `idleBackoff`, a pass that resolves to 0 or false found no work: the pause doubles up to `maxMs`, so an
 * idle worker polls rarely; a pass that found work, or `wake()` (work was just committed in this process), brings
 * it back to `intervalMs` at once.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<void>;
  private stopped = true;
  private delayMs: number;
  private again = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly pass: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly idleBackoff?: IdleBackoff,
  ) {
    this.delayMs = intervalMs;
  }

  /** The pause before the next scheduled pass (for specs and metrics). */
  get nextDelayMs(): number {
    return this.delayMs;
  }

  /**
   * New work is there: a pass now, or right after the one in flight (which may have looked before the work was
   * committed); the pause goes back to `intervalMs`.
   */
  wake(): void {
    if (this.stopped) return;
    this.delayMs = this.intervalMs;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    void this.runOnce().then(() => this.schedule());
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** One pass now (or the one already running); never throws. */
  runOnce(): Promise<void> {
    this.inFlight ??= this.pass()
      .then((found) => {
        if (!this.idleBackoff) return;
        const idle = found === 0 || found === false;
        this.delayMs = idle ? Math.min(this.delayMs * 2, this.idleBackoff.maxMs) : this.intervalMs;
      })
      .catch((error: unknown) =>
        this.logger.error({ task: this.name, err: String(error) }, 'periodic task failed'),
      )
      .finally(() => {
        this.inFlight = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.delayMs = this.intervalMs;
          void this.runOnce();
        }
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
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.runOnce().then(() => this.schedule());
    }, this.delayMs);
    this.timer.unref();
  }
}
