import { Registry } from 'prom-client';
import { Logger } from './logger';

/**
 * A probe that fills gauges when the registry is read (a Prometheus scrape) instead of on a timer: nothing runs
 * while nobody looks, so an idle service costs nothing for it. A probe that ended less than `maxAgeMs` ago is not
 * run again (several gauges, several scrapers, one answer); a scrape during a probe waits for that one. A failing
 * probe is logged and the gauges keep their last values; it never fails the scrape.
 */
export class ScrapeProbe {
  private endedAt = Number.NEGATIVE_INFINITY;
  private inFlight?: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<unknown>,
    private readonly maxAgeMs: number,
    private readonly logger: Logger,
  ) {}

  refresh(): Promise<void> {
    if (Date.now() - this.endedAt < this.maxAgeMs) return Promise.resolve();
    this.inFlight ??= this.run()
      .then(() => {
        this.endedAt = Date.now();
      })
      .catch((error: unknown) =>
        this.logger.warn({ probe: this.name, err: String(error) }, 'metrics probe failed'),
      )
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}

const probeSets = new WeakMap<Registry, Map<string, Set<ScrapeProbe>>>();

/** The probes of one family (`kafka-lag`, ...) of a registry, refreshed by that family's gauges' `collect`. */
function family(registry: Registry, name: string): Set<ScrapeProbe> {
  let byName = probeSets.get(registry);
  if (!byName) probeSets.set(registry, (byName = new Map()));
  let set = byName.get(name);
  if (!set) byName.set(name, (set = new Set()));
  return set;
}

/** Adds a probe to a family; returns what removes it again (on shutdown). */
export function addScrapeProbe(registry: Registry, name: string, probe: ScrapeProbe): () => void {
  const set = family(registry, name);
  set.add(probe);
  return () => set.delete(probe);
}

/** A gauge's `collect`: refreshes every probe of the family before the gauge is read. */
export const refreshFamily = (registry: Registry, name: string) => async (): Promise<void> => {
  await Promise.all([...family(registry, name)].map((p) => p.refresh()));
};
