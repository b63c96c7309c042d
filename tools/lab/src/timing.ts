// Waiting without blocking the event loop: the sessions of one experiment share this process.
import { performance } from 'node:perf_hooks';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Waits `ms` (fractions included): a timer for the bulk, then yields turn by turn so other sessions keep running. */
export async function pause(ms: number): Promise<void> {
  if (ms <= 0) return;
  const deadline = performance.now() + ms;
  if (ms >= 2) await new Promise<void>((resolve) => setTimeout(resolve, Math.floor(ms) - 1));
  while (performance.now() < deadline) await nextTurn();
}

/** Lets `parties` callers go on together once the last of them has arrived (a one-shot barrier). */
export class Barrier {
  private arrived = 0;
  private release!: () => void;
  private readonly open = new Promise<void>((resolve) => (this.release = resolve));

  constructor(private readonly parties: number) {}

  /** Resolves for everyone when the `parties`-th caller arrives. */
  wait(): Promise<void> {
    this.arrived += 1;
    if (this.arrived === this.parties) this.release();
    return this.open;
  }
}
