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
});
