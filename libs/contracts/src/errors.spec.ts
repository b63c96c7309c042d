import assert from 'node:assert/strict';
import { describe, it } from '@jest/globals';
import { DomainError, isErrorCode, statusOfError } from './errors';
import { HTTP_ERRORS, HttpErrorCode } from './http/errors';

describe('error codes', () => {
  it('answers every public code with the status HTTP_ERRORS gives it', () => {
    for (const code of Object.keys(HTTP_ERRORS) as HttpErrorCode[]) {
      assert.ok(isErrorCode(code), code);
      assert.equal(statusOfError(code), HTTP_ERRORS[code].status, code);
      assert.equal(new DomainError(code, 'x').status, HTTP_ERRORS[code].status, code);
    }
  });

  it('knows the codes beyond the public API, and no others', () => {
    assert.equal(statusOfError('HANDLER_FAILED'), 500);
    assert.equal(statusOfError('PAYMENT.UNKNOWN_TENANT'), 422);
    assert.equal(statusOfError('NO_SUCH_CHARGE'), 404);
    assert.ok(!isErrorCode('NOT_A_CODE'));
    assert.ok(!isErrorCode('toString'));
  });

  it('makes a DomainError without a stack trace, with its code, details and class name, and leaves the limit as it was', () => {
    class OutOfStockLike extends DomainError {
      constructor() {
        super('OUT_OF_STOCK', 'sold out', { sku: 'A' });
      }
    }
    const before = Error.stackTraceLimit;
    const e = new OutOfStockLike();
    assert.equal(Error.stackTraceLimit, before);
    assert.ok(e instanceof DomainError && e instanceof Error);
    assert.equal(e.code, 'OUT_OF_STOCK');
    assert.deepEqual(e.details, { sku: 'A' });
    assert.equal(e.name, 'OutOfStockLike');
    assert.doesNotMatch(e.stack ?? '', /\n\s+at /);
    assert.match(new Error('a fault keeps its stack').stack ?? '', /\n\s+at /);
  });
});
