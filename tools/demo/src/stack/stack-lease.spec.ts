import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadStackConfig } from '@checkout/local-stack';
import { StackDeps, StackLease } from './stack-lease';

/** A pretend stack: which parts run (with their pids), what up() and stop() did. */
function fakeStack(running: Record<string, number | undefined>) {
  const pids = new Map(Object.entries(running).filter(([, pid]) => pid !== undefined) as [string, number][]);
  const calls: string[] = [];
  let nextPid = 100;
  const names = ['postgres', 'kafka', 'order'];
  const deps: StackDeps = {
    config: loadStackConfig(),
    parts: names.map((name) => ({
      name,
      running: async () => pids.has(name),
      stop: async () => {
        calls.push(`stop ${name}`);
        pids.delete(name);
      },
    })),
    up: async () => {
      calls.push('up');
      for (const n of names) if (!pids.has(n)) pids.set(n, nextPid++);
      return { total: 1 };
    },
    pidOf: (name) => pids.get(name),
  };
  return { deps, calls, pids };
}

describe('the demo holds the stack: reuse what runs, stop only what it started', () => {
  it('given the whole stack running, does not call up and stops nothing', async () => {
    const s = fakeStack({ postgres: 1, kafka: 2, order: 3 });

    const lease = await StackLease.acquire(undefined, s.deps);
    await lease.release(() => undefined);

    assert.equal(lease.timings, null);
    assert.deepEqual(lease.reused, ['postgres', 'kafka', 'order']);
    assert.deepEqual(s.calls, []);
  });

  it('given a running stack without one service (its owner restarting it), fills it in and stops nothing', async () => {
    const s = fakeStack({ postgres: 1, kafka: 2 });

    const lease = await StackLease.acquire(undefined, s.deps);
    await lease.release(() => undefined);

    assert.deepEqual(lease.filledIn, ['order']);
    assert.deepEqual(lease.startedNames, []);
    assert.deepEqual(s.calls, ['up']);
    assert.ok(s.pids.has('order'));
  });

  it('given nothing running, starts the stack and stops all of it, services first', async () => {
    const s = fakeStack({});

    const lease = await StackLease.acquire(undefined, s.deps);
    await lease.release(() => undefined);

    assert.deepEqual(s.calls, ['up', 'stop order', 'stop kafka', 'stop postgres']);
  });

  it('leaves running a part someone restarted while the demo ran (its pid is not the one the demo started)', async () => {
    const s = fakeStack({});
    const lease = await StackLease.acquire(undefined, s.deps);
    s.pids.set('order', 999);
    const lines: string[] = [];

    await lease.release((l) => lines.push(l));

    assert.deepEqual(s.calls, ['up', 'stop kafka', 'stop postgres']);
    assert.ok(lines.includes('order is no longer the process the demo started: left running'));
  });
});
