import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Pool } from 'pg';
import { loadStackConfig } from '@checkout/local-stack';
import { NamedStatementClient } from '../src/named-statements';

describe('NamedStatementClient: parameterised statements are prepared once per connection', () => {
  let pool: Pool;

  beforeAll(() => {
    const config = loadStackConfig();
    pool = new Pool({
      host: '127.0.0.1',
      port: config.pg.port,
      user: config.pg.superuser,
      password: config.pg.password,
      database: 'postgres',
      max: 1,
      Client: NamedStatementClient,
    });
  });
  afterAll(() => pool.end());

  const prepared = async (client: { query: Pool['query'] }) =>
    (
      await client.query<{ name: string; statement: string }>(
        `SELECT name, statement FROM pg_prepared_statements ORDER BY name`,
      )
    ).rows;

  it('prepares a statement with parameters once and reuses it; answers stay right', async () => {
    const client = await pool.connect();
    try {
      const text = 'SELECT $1::int + $2::int AS sum';
      for (let i = 0; i < 5; i += 1) {
        const { rows } = await client.query<{ sum: number }>(text, [i, 10]);
        assert.equal(rows[0].sum, i + 10);
      }
      const named = (await prepared(client)).filter((p) => p.statement === text);
      assert.equal(named.length, 1, 'one prepared statement for the text, whatever the executions');
      assert.match(named[0].name, /^s_/);
    } finally {
      client.release();
    }
  });

  it('leaves statements without parameters (BEGIN, COMMIT, DDL) on the simple protocol', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 AS one');
      await client.query('COMMIT');
      const texts = (await prepared(client)).map((p) => p.statement);
      assert.ok(!texts.includes('SELECT 1 AS one'), `unexpectedly prepared: ${texts.join(' | ')}`);
    } finally {
      client.release();
    }
  });

  it('a failing execution of a prepared statement leaves the connection usable and the statement reused', async () => {
    const client = await pool.connect();
    try {
      const text = 'SELECT 10 / $1::int AS q';
      assert.equal((await client.query<{ q: number }>(text, [2])).rows[0].q, 5);
      await assert.rejects(client.query(text, [0]), /division by zero/);
      assert.equal((await client.query<{ q: number }>(text, [5])).rows[0].q, 2);
      assert.equal((await prepared(client)).filter((p) => p.statement === text).length, 1);
    } finally {
      client.release();
    }
  });
});
