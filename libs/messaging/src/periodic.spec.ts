import { afterEach, beforeEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { withGlobal } from '@sinonjs/fake-timers';
import { PeriodicTask } from './periodic';

const quiet = { info() {}, warn() {}, error() {} };

// The spec environment runs in the process's own realm, without jest's fake timers: sinon's, on this realm, for
// every case of this file.
let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
beforeEach(() => {
  clock = withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  clock.uninstall();
});

describe('PeriodicTask', () => {
  /** A task whose passes report `work[i]` items (0 when the list is exhausted) and are timestamped. */
  function task(work: number[], idleMaxMs?: number) {
    const at: number[] = [];
    const t = new PeriodicTask(
      'spec',
      100,
      async () => {
        at.push(Date.now());
        return work.shift() ?? 0;
      },
      quiet,
      idleMaxMs === undefined ? undefined : { maxMs: idleMaxMs },
    );
    return { t, at };
  }

  it('without idle backoff, runs every intervalMs whatever a pass found', async () => {
    const { t, at } = task([]);
    const start = Date.now();
    t.start();
    await clock.tickAsync(1_000);
    await t.stop();
    assert.equal(at.length, 10);
    assert.equal(at[9] - start, 1_000);
  });

  it('with idle backoff, doubles the pause while passes find nothing, up to maxMs, and resets on work', async () => {
    const { t, at } = task([0, 0, 0, 0, 0, 3, 0], 1_000);
    const start = Date.now();
    t.start();
    await clock.tickAsync(100 + 200 + 400 + 800 + 1_000 + 1_000 + 100);
    await t.stop();
    // Pauses: 100, then 200, 400, 800, 1000 (capped), 1000; the 6th pass found 3 items, so the next pause is 100.
    assert.deepEqual(
      at.map((x) => x - start),
      [100, 300, 700, 1_500, 2_500, 3_500, 3_600],
    );
  });

  it('wake() runs a pass at once and brings the pause back to intervalMs', async () => {
    const { t, at } = task([], 10_000);
    const start = Date.now();
    t.start();
    await clock.tickAsync(100 + 200 + 400);
    assert.equal(t.nextDelayMs, 800);
    t.wake();
    await clock.tickAsync(0);
    assert.equal(at.at(-1)! - start, 700, 'the woken pass ran at once');
    assert.equal(at.length, 4);
    await clock.tickAsync(200);
    assert.equal(at.length, 5, 'the next pass came after 200 ms (100 doubled once), not 1,600');
    await t.stop();
  });

  it('wake() during a pass runs one more pass right after it (the running one may have looked too early)', async () => {
    let release!: () => void;
    let runs = 0;
    const t = new PeriodicTask(
      'spec',
      60_000,
      async () => {
        runs += 1;
        if (runs === 1) await new Promise<void>((r) => (release = r));
        return 0;
      },
      quiet,
      { maxMs: 60_000 },
    );
    t.start();
    t.wake();
    await clock.tickAsync(0);
    assert.equal(runs, 1);
    t.wake();
    t.wake();
    release();
    await clock.tickAsync(0);
    assert.equal(runs, 2, 'one more pass, not one per wake');
    await t.stop();
  });

  it('a stopped task does not wake', async () => {
    const { t, at } = task([], 1_000);
    t.start();
    await t.stop();
    t.wake();
    await clock.tickAsync(5_000);
    assert.equal(at.length, 0);
  });
});

describe('PeriodicTask with due times', () => {
  /** A task (longest sleep 10 s) whose passes say when their next work is due: `due[i]` (null when exhausted). */
  function dueTask(due: (number | null)[]) {
    const at: number[] = [];
    const t = new PeriodicTask(
      'spec',
      10_000,
      async () => {
        at.push(Date.now());
        return { dueInMs: due.length ? due.shift()! : null };
      },
      quiet,
    );
    return { t, at };
  }

  it('sleeps until the next due time a pass reports, and at most intervalMs when nothing is due', async () => {
    const { t, at } = dueTask([3_000, null, 0]);
    const start = Date.now();
    t.start();
    await clock.tickAsync(10_000 + 3_000 + 10_000 + 250);
    await t.stop();
    // First pass after intervalMs; then 3 s (due); then 10 s (nothing due); a row still due: the 250 ms floor.
    assert.deepEqual(
      at.map((x) => x - start),
      [10_000, 13_000, 23_000, 23_250],
    );
  });

  it('dueIn() brings the next pass forward, never back', async () => {
    const { t, at } = dueTask([]);
    const start = Date.now();
    t.start();
    t.dueIn(2_000);
    t.dueIn(5_000);
    await clock.tickAsync(2_000);
    assert.deepEqual(
      at.map((x) => x - start),
      [2_000],
    );
    await clock.tickAsync(10_000);
    assert.equal(at.length, 2, 'then intervalMs again, as the pass knew of nothing due');
    await t.stop();
  });

  /**
   * A task (longest sleep 10 s) whose first pass runs until `release()`; pass n (from 2) takes `busyMs[n]` and
   * reports `due[n]` (null: nothing due).
   */
  function blockedTask(busyMs: Record<number, number>, due: Record<number, number>) {
    const control = { release: () => undefined as void, at: [] as number[] };
    const t = new PeriodicTask(
      'spec',
      10_000,
      async () => {
        control.at.push(Date.now());
        const pass = control.at.length;
        if (pass === 1) await new Promise<void>((r) => (control.release = r));
        if (busyMs[pass]) await new Promise<void>((r) => setTimeout(r, busyMs[pass]));
        return { dueInMs: due[pass] ?? null };
      },
      quiet,
    );
    return { t, control, start: Date.now() };
  }

  it('dueIn() during a pass is kept for the pass after it (the running one may have looked too early)', async () => {
    const { t, control, start } = blockedTask({}, {});
    t.start();
    t.dueIn(0);
    await clock.tickAsync(0);
    assert.equal(control.at.length, 1);
    t.dueIn(1_000);
    control.release();
    await clock.tickAsync(1_000);
    assert.deepEqual(
      control.at.map((x) => x - start),
      [0, 1_000],
    );
    await t.stop();
  });

  it('wake() during a pass: the pass it adds keeps the due time it reports (not the longest sleep)', async () => {
    // The added pass takes 10 ms (a query) and sees work due 1 s later (a refund deferred by its backoff, say).
    const { t, control, start } = blockedTask({ 2: 10 }, { 2: 1_000 });
    t.start();
    t.wake();
    await clock.tickAsync(0);
    t.wake();
    control.release();
    await clock.tickAsync(1_010);
    assert.deepEqual(
      control.at.map((x) => x - start),
      [0, 0, 1_010],
    );
    await t.stop();
  });

  it('a stopped task ignores dueIn()', async () => {
    const { t, at } = dueTask([]);
    t.start();
    await t.stop();
    t.dueIn(0);
    await clock.tickAsync(20_000);
    assert.equal(at.length, 0);
  });
});
