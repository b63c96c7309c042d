import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { NonRetryableError, isInfrastructureError } from './errors';

/** An error as TypeORM throws it: a QueryFailedError around the driver's error. */
const queryFailed = (code: string, message = 'query failed') =>
  Object.assign(new Error(message), {
    name: 'QueryFailedError',
    driverError: Object.assign(new Error(message), { code }),
  });

describe('isInfrastructureError', () => {
  it('knows a database that is away, overloaded or in the way of itself', () => {
    for (const code of ['57P01', '57P02', '57P03', '53300', '40001', '40P01', '08006', '08001', '08P01'])
      assert.equal(isInfrastructureError(queryFailed(code)), true, code);
  });

  it('knows lost and refused connections, with or without a code', () => {
    assert.equal(
      isInfrastructureError(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      ),
      true,
    );
    assert.equal(
      isInfrastructureError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
      true,
    );
    assert.equal(isInfrastructureError(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isInfrastructureError(new Error('timeout exceeded when trying to connect')), true);
    const both = new AggregateError(
      [Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })],
      'connect failed',
    );
    assert.equal(isInfrastructureError(both), true);
    assert.equal(isInfrastructureError(new Error('wrapped', { cause: queryFailed('57P01') })), true);
  });

  it('leaves errors of the event or of the code to the DLQ', () => {
    for (const code of ['23505', '23514', '22P02', '42P01'])
      assert.equal(isInfrastructureError(queryFailed(code)), false, code);
    assert.equal(isInfrastructureError(new NonRetryableError('INVENTORY.LINE_TOO_LARGE', 'no')), false);
    assert.equal(
      isInfrastructureError(new TypeError("Cannot read properties of undefined (reading 'sku')")),
      false,
    );
    assert.equal(isInfrastructureError('a string'), false);
    assert.equal(isInfrastructureError(undefined), false);
  });
});
