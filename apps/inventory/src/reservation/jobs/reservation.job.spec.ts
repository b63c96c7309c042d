import { afterEach, beforeEach, describe, it } from '@jest/globals';
import { withGlobal } from '@sinonjs/fake-timers';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { InventoryConfig } from '../../config/inventory.config';
import { ExpireReservationsHandler, RepairDriftHandler } from '../commands';
import { ReservationExpiryAlarm } from '../expiry-alarm';
import { ReservationMetrics } from '../reservation.metrics';
import { ReservationJob } from './reservation.job';

describe('ReservationJob: one tenant failing does not stop the pass for the others', () => {
  it('expires and repairs every later tenant after one tenant throws, and logs that tenant', async () => {
    const tenants = new TenantRegistry(
      ['broken', 'next'].map((id) => ({ id, apiKeySha256: hashApiKey(id) })),
    );
    const seen: string[] = [];
    const expire = {
      execute: (_tx: unknown, { tenantId }: { tenantId: string }) => {
        seen.push(`expire:${tenantId}`);
        if (tenantId === 'broken') throw new Error('invalid input syntax for type uuid');
        return Promise.resolve([]);
      },
    } as unknown as ExpireReservationsHandler;
    const repair = {
      execute: (_ds: unknown, { tenantId }: { tenantId: string }) => {
        seen.push(`repair:${tenantId}`);
        if (tenantId === 'broken') throw new Error('deadlock detected');
        return Promise.resolve([]);
      },
    } as unknown as RepairDriftHandler;
    const errors: Record<string, unknown>[] = [];
    const logger = {
      setContext: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (obj: Record<string, unknown>) => errors.push(obj),
    } as unknown as PinoLogger;
    const jobs = new ReservationJob(
      { INVENTORY_EXPIRY_BATCH_SIZE: 100 } as InventoryConfig,
      { transaction: (fn: (tx: unknown) => unknown) => fn({}) } as unknown as DataSource,
      tenants,
      expire,
      repair,
      { expired: { inc: () => undefined }, recordDrift: () => undefined } as unknown as ReservationMetrics,
      logger,
      new ReservationExpiryAlarm(),
    );
    assert.equal(await jobs.expireAll(), 0);
    await jobs.repairAll();
    assert.deepEqual(seen, ['expire:broken', 'expire:next', 'repair:broken', 'repair:next']);
    assert.deepEqual(
      errors.map((e) => [e.job, e.tenantId]),
      [
        ['expiry', 'broken'],
        ['drift', 'broken'],
      ],
    );
  });
});

describe('ReservationJob: expiry sleeps until the earliest held reservation is due', () => {
  /** A job over two tenants whose look at the held reservations answers `dues` in turn (ms until due, or null). */
  function jobWith(dues: (number | null)[]) {
    const tenants = new TenantRegistry(['a', 'b'].map((id) => ({ id, apiKeySha256: hashApiKey(id) })));
    const passes: string[] = [];
    const looks: string[] = [];
    const alarm = new ReservationExpiryAlarm();
    const jobs = new ReservationJob(
      { INVENTORY_EXPIRY_BATCH_SIZE: 100, INVENTORY_EXPIRY_INTERVAL_MS: 5_000 } as InventoryConfig,
      {
        transaction: (fn: (tx: unknown) => unknown) => fn({}),
        query: (text: string) => {
          looks.push(text);
          return Promise.resolve([{ due: dues.shift() ?? null }]);
        },
      } as unknown as DataSource,
      tenants,
      {
        execute: (_tx: unknown, { tenantId }: { tenantId: string }) => {
          passes.push(tenantId);
          return Promise.resolve([]);
        },
      } as unknown as ExpireReservationsHandler,
      { execute: () => Promise.resolve([]) } as unknown as RepairDriftHandler,
      { expired: { inc: () => undefined } } as unknown as ReservationMetrics,
      { setContext: () => undefined } as unknown as PinoLogger,
      alarm,
    );
    return { jobs, passes, looks, alarm };
  }

  it('at rest (nothing held): one look, no tenant pass, and nothing known to be due', async () => {
    const { jobs, passes, looks } = jobWith([null]);
    assert.deepEqual(await jobs.expireDue(), { dueInMs: null });
    assert.deepEqual(passes, [], 'no per-tenant transaction');
    assert.equal(looks.length, 1);
    assert.match(looks[0], /min\(expires_at\) - now\(\)[\s\S]*status = 'held' AND tenant_id = ANY/);
  });

  it('held but not due yet: no tenant pass, and the time until the earliest expiry', async () => {
    const { jobs, passes } = jobWith([1_500]);
    assert.deepEqual(await jobs.expireDue(), { dueInMs: 1_500 });
    assert.deepEqual(passes, []);
  });

  it('due: a pass over every tenant, then the time until the next held one', async () => {
    const { jobs, passes, looks } = jobWith([-3, 2_000]);
    assert.deepEqual(await jobs.expireDue(), { dueInMs: 2_000 });
    assert.deepEqual(passes, ['a', 'b']);
    assert.equal(looks.length, 2);
  });

  it('rows that stay due after a pass that released nothing: the interval, not a loop', async () => {
    const { jobs, passes } = jobWith([-3, -3]);
    assert.deepEqual(await jobs.expireDue(), { dueInMs: 5_000 });
    assert.deepEqual(passes, ['a', 'b']);
  });

  describe('scheduled', () => {
    let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
    beforeEach(() => {
      clock = withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    });
    afterEach(() => {
      clock.uninstall();
    });

    it('a reservation held by this process wakes the job when it expires, not at the next interval', async () => {
      // Boot look: nothing held. Then the alarm's look 1 s later: due; the pass; then nothing held again.
      const { jobs, passes, looks, alarm } = jobWith([null, -1, null]);
      jobs.onApplicationBootstrap();
      await clock.tickAsync(0);
      assert.equal(looks.length, 1, 'one look at boot');
      alarm.heldUntil(new Date(Date.now() + 1_000));
      await clock.tickAsync(999);
      assert.deepEqual(passes, []);
      await clock.tickAsync(1);
      assert.deepEqual(passes, ['a', 'b'], 'released when due (the interval is 5 s)');
      await jobs.beforeApplicationShutdown();
    });
  });
});
