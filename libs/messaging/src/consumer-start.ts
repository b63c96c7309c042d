import { Logger } from './logger';

/** What each consumer group of this process is doing: the `consumers` detail of the readiness report. */
export type ConsumerState = 'starting' | 'running' | 'retrying' | 'stopped';

/** The consumer groups of this process by group id and their state. */
export const consumerStates = new Map<string, ConsumerState>();

/**
 * Starts a consumer without holding up the HTTP port or readiness: the first attempt runs in the background and
 * a failed one (Kafka down at boot) is abandoned and retried with a capped backoff, until one joins its group or
 * stop() is called. The service answers what needs only its database meanwhile.
 */
export class BackgroundStart {
  private stopped = false;
  private wake?: () => void;

  constructor(
    private readonly name: string,
    private readonly logger: Logger,
    private readonly attempt: () => Promise<void>,
    private readonly abandon: () => Promise<void>,
    private readonly backoff = { initialMs: 1_000, maxMs: 30_000 },
  ) {
    consumerStates.set(name, 'starting');
    void this.run();
  }

  /** Whether stop() was called: an attempt that joins afterwards must not start anything more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** No further attempt; an attempt in flight is left to the caller's own stop. */
  stop(): void {
    this.stopped = true;
    consumerStates.set(this.name, 'stopped');
    this.wake?.();
  }

  private async run(): Promise<void> {
    let delay = this.backoff.initialMs;
    while (!this.stopped) {
      try {
        await this.attempt();
        if (!this.stopped) consumerStates.set(this.name, 'running');
        return;
      } catch (error) {
        if (this.stopped) return;
        consumerStates.set(this.name, 'retrying');
        this.logger.warn(
          { consumer: this.name, err: String(error), retryInMs: delay },
          'consumer could not start: retrying in the background',
        );
        await this.abandon().catch(() => undefined);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        delay = Math.min(delay * 2, this.backoff.maxMs);
      }
    }
  }
}
