import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { InventoryConfig } from '../../config/inventory.config';
import { ExpireReservationsHandler, RepairDriftHandler } from '../commands';
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
      {
        transaction: (fn: (tx: unknown) => unknown) => fn({}),
        query: () => Promise.resolve([{ due: true }]),
      } as unknown as DataSource,
      tenants,
      expire,
      repair,
      { expired: { inc: () => undefined }, recordDrift: () => undefined } as unknown as ReservationMetrics,
      logger,
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

describe('ReservationJob: expiry at rest', () => {
  it('looks once and runs no tenant pass while no held reservation is due', async () => {
    const tenants = new TenantRegistry(['a', 'b'].map((id) => ({ id, apiKeySha256: hashApiKey(id) })));
    let passes = 0;
    const looks: string[] = [];
    const jobs = new ReservationJob(
      { INVENTORY_EXPIRY_BATCH_SIZE: 100 } as InventoryConfig,
      {
        transaction: () => {
          passes += 1;
          return Promise.resolve([]);
        },
        query: (text: string) => {
          looks.push(text);
          return Promise.resolve([{ due: false }]);
        },
      } as unknown as DataSource,
      tenants,
      { execute: () => Promise.resolve([]) } as unknown as ExpireReservationsHandler,
      { execute: () => Promise.resolve([]) } as unknown as RepairDriftHandler,
      { expired: { inc: () => undefined } } as unknown as ReservationMetrics,
      { setContext: () => undefined } as unknown as PinoLogger,
    );
    assert.equal(await jobs.expireAll(), 0);
    assert.equal(passes, 0, 'no per-tenant transaction');
    assert.equal(looks.length, 1);
    assert.match(looks[0], /status = 'held' AND expires_at <= now\(\)/);
  });
});
