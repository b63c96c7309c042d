import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Gauge, Registry } from 'prom-client';
import { ScrapeProbe, addScrapeProbe, refreshFamily } from './scrape-probe';

const quiet = { info() {}, warn() {}, error() {} };

/** A registry with two gauges of one family, filled by a probe that counts its runs. */
function setup(maxAgeMs: number, fail = false) {
  const registry = new Registry();
  const collect = refreshFamily(registry, 'spec');
  const a = new Gauge({ name: 'spec_a', help: 'a', registers: [registry], collect });
  const b = new Gauge({ name: 'spec_b', help: 'b', registers: [registry], collect });
  const warned: string[] = [];
  let runs = 0;
  const probe = new ScrapeProbe(
    'spec',
    async () => {
      runs += 1;
      if (fail) throw new Error('broker away');
      a.set(runs);
      b.set(runs * 10);
    },
    maxAgeMs,
    { ...quiet, warn: (o: object, msg?: string) => warned.push(`${msg} ${JSON.stringify(o)}`) },
  );
  const remove = addScrapeProbe(registry, 'spec', probe);
  return { registry, runs: () => runs, warned, remove };
}

describe('ScrapeProbe: gauges filled when scraped, not on a timer', () => {
  it('runs nothing until the registry is read, then once for every gauge of the family', async () => {
    const s = setup(60_000);
    assert.equal(s.runs(), 0, 'nobody scraped: nothing ran');
    const text = await s.registry.metrics();
    assert.equal(s.runs(), 1, 'two gauges, one probe run');
    assert.match(text, /^spec_a 1$/m);
    assert.match(text, /^spec_b 10$/m);
  });

  it('answers a scrape within maxAgeMs from the last run, and runs again after it', async () => {
    const cached = setup(60_000);
    await cached.registry.metrics();
    await cached.registry.metrics();
    assert.equal(cached.runs(), 1);
    const fresh = setup(0);
    await fresh.registry.metrics();
    const text = await fresh.registry.metrics();
    assert.equal(fresh.runs(), 2);
    assert.match(text, /^spec_a 2$/m);
  });

  it('joins a run in flight instead of starting a second one', async () => {
    const s = setup(0);
    await Promise.all([s.registry.metrics(), s.registry.metrics(), s.registry.metrics()]);
    assert.ok(s.runs() <= 2, `runs ${s.runs()}`);
  });

  it('keeps the scrape working when the probe fails, logs it, and retries at the next scrape', async () => {
    const s = setup(60_000, true);
    const text = await s.registry.metrics();
    assert.match(text, /^spec_a 0$/m);
    assert.equal(s.warned.length, 1);
    assert.match(s.warned[0], /metrics probe failed .*broker away/);
    await s.registry.metrics();
    assert.equal(s.runs(), 2, 'a failed run is not cached');
  });

  it('stops running a probe once removed (shutdown)', async () => {
    const s = setup(0);
    s.remove();
    await s.registry.metrics();
    assert.equal(s.runs(), 0);
  });
});
