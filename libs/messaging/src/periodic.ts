import { Logger } from './logger';

/** How a polling worker slows down while it finds nothing (see PeriodicTask). */
export interface IdleBackoff {
  /** The longest pause between two passes that found nothing; the pause doubles from `intervalMs` up to it. */
  maxMs: number;
}

/**
 * What a due-time pass resolves to: how long until the earliest work it knows of is due (null: none is known).
 * The next pass runs then, and no later than `intervalMs`, which becomes the longest sleep: a job that knows when
 * its rows fall due sleeps until then instead of looking every interval (see `dueIn`).
 */
export interface NextDue {
  dueInMs: number | null;
}

/** The shortest pause after a due-time pass, so a row that stays due (locked elsewhere) is not polled in a loop. */
export const MIN_DUE_PAUSE_MS = 250;

const isNextDue = (x: unknown): x is NextDue => typeof x === 'object' && x !== null && 'dueInMs' in x;

/**
 * Runs one async pass every `intervalMs` (the next pass is scheduled when the previous one ends, so passes never
 * overlap); a failing pass is logged and the schedule goes on. `stop()` waits for the pass in flight.
 * With `idleBackoff`, a pass that resolves to 0 or false found no work: the pause doubles up to `maxMs`, so an
 * idle worker polls rarely; a pass that found work, or `wake()` (work was just committed in this process), brings
 * it back to `intervalMs` at once.
 * A pass that resolves to a `NextDue` schedules the next one when that work falls due (at most `intervalMs`
 * away), and `dueIn(ms)` brings the next pass forward when this process writes work that falls due sooner.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<void>;
  private stopped = true;
  private delayMs: number;
  private again = false;
  /** When the scheduled timer fires (epoch ms; Infinity: none scheduled). */
  private timerAt = Number.POSITIVE_INFINITY;
  /** The earliest `dueIn` asked for while a pass was in flight, applied when the next pass is scheduled. */
  private dueAt = Number.POSITIVE_INFINITY;

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
    this.timerAt = Number.POSITIVE_INFINITY;
    void this.runOnce().then(() => this.schedule());
  }

  /**
   * Work falls due `ms` from now (just written by this process): the next pass runs no later than that. A pass in
   * flight may have looked before the work was committed, so the time is kept for the pass after it.
   */
  dueIn(ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + Math.max(0, ms);
    if (this.inFlight) {
      this.dueAt = Math.min(this.dueAt, at);
      return;
    }
    if (at < this.timerAt) this.scheduleAt(at);
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
        if (isNextDue(found)) {
          const due = found.dueInMs ?? this.intervalMs;
          this.delayMs = Math.min(Math.max(due, MIN_DUE_PAUSE_MS), this.intervalMs);
          return;
        }
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
          // Scheduled from its own result when it ends (a due time it reports, say); whatever the caller of the
          // pass that ended schedules now is replaced then.
          void this.runOnce().then(() => this.schedule());
        }
      });
    return this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timerAt = Number.POSITIVE_INFINITY;
    await this.inFlight;
  }

  private schedule(): void {
    const at = Math.min(Date.now() + this.delayMs, this.dueAt);
    this.dueAt = Number.POSITIVE_INFINITY;
    this.scheduleAt(at);
  }

  private scheduleAt(at: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timerAt = Number.POSITIVE_INFINITY;
        void this.runOnce().then(() => this.schedule());
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }
}
