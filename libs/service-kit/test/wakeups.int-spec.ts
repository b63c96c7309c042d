import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PinoLogger } from 'nestjs-pino';
import { Pool } from 'pg';
import { loadStackConfig, waitFor } from '@checkout/local-stack';
import { BaseConfig } from '../src/config';
import { DatabaseWakeups, wakeOnCommit } from '../src/wakeups';

const quiet = {
  setContext: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as PinoLogger;

describe('DatabaseWakeups: workers wake when a transaction commits work for them (LISTEN/NOTIFY)', () => {
  const config = loadStackConfig();
  const url = `postgres://${config.pg.superuser}:${encodeURIComponent(config.pg.password)}@127.0.0.1:${config.pg.port}/postgres`;
  const name = `wakeups-spec-${randomBytes(3).toString('hex')}`;
  const pool = new Pool({ connectionString: url, max: 2 });
  const wakeups = new DatabaseWakeups({ DATABASE_URL: url, SERVICE_NAME: name } as BaseConfig, quiet);
  const woken = { refunds: 0, other: 0 };

  /** One transaction that notifies `channel`, committed or rolled back. */
  const transaction = async (channel: string, outcome: 'COMMIT' | 'ROLLBACK') => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await wakeOnCommit(client, channel);
      await wakeOnCommit(client, channel);
      await client.query(outcome);
    } finally {
      client.release();
    }
  };

  /** Resolves once both counters have stopped at the values `expected` gives (a wake-up that came late fails it). */
  const settlesAt = async (expected: typeof woken) => {
    await waitFor(
      'wake-ups',
      async () => woken.refunds === expected.refunds && woken.other === expected.other,
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
    // A round trip through the same server after the expected wake-ups: anything sent before it has arrived.
    fenced = 0;
    await transaction('wakeups_spec_fence', 'COMMIT');
    await waitFor('fence', async () => fenced > 0, { timeoutMs: 10_000, intervalMs: 20 });
    assert.deepEqual(woken, expected);
  };
  let fenced = 0;

  beforeAll(async () => {
    wakeups.on('wakeups_spec_refunds', () => (woken.refunds += 1));
    wakeups.on('wakeups_spec_other', () => (woken.other += 1));
    wakeups.on('wakeups_spec_fence', () => (fenced += 1));
    await wakeups.listening();
  });

  afterAll(async () => {
    await wakeups.onApplicationShutdown();
    await pool.end();
  });

  it('a commit wakes the subscribers of its channel once, whatever it notified; a rollback wakes nobody', async () => {
    await transaction('wakeups_spec_refunds', 'COMMIT');
    await settlesAt({ refunds: 1, other: 0 });
    await transaction('wakeups_spec_other', 'ROLLBACK');
    await transaction('wakeups_spec_refunds', 'ROLLBACK');
    await settlesAt({ refunds: 1, other: 0 });
    await transaction('wakeups_spec_other', 'COMMIT');
    await settlesAt({ refunds: 1, other: 1 });
  });

  it('a dropped connection is opened again and wakes every subscriber once (what it missed), then listens as before', async () => {
    const before = { ...woken };
    const { rowCount } = await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
      [`${name}-wakeups`],
    );
    assert.equal(rowCount, 1);
    await settlesAt({ refunds: before.refunds + 1, other: before.other + 1 });
    await transaction('wakeups_spec_refunds', 'COMMIT');
    await settlesAt({ refunds: before.refunds + 2, other: before.other + 1 });
  });

  it('refuses a channel that is not a plain identifier', () => {
    assert.throws(
      () => wakeups.on('payment-refunds; DROP TABLE x', () => undefined),
      /invalid wake-up channel/,
    );
  });
});
