import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ArgumentsHost, HttpException, NotFoundException } from '@nestjs/common';
import { DomainError, HTTP_ERRORS } from '@checkout/contracts';
import { DomainErrorFilter } from './error.filter';

/** A fastify reply that records what the filter sent. */
function fakeResponse() {
  const sent: { status?: number; body?: unknown; headers: Record<string, string> } = {
    // What a route that answers a page declared before it failed.
    headers: { 'content-type': 'text/html; charset=utf-8' },
  };
  const res = {
    sent: false,
    raw: {
      headersSent: false,
      destroy() {
        sent.status = -1;
      },
    },
    header(name: string, value: string) {
      sent.headers[name.toLowerCase()] = value;
      return res;
    },
    code(code: number) {
      sent.status = code;
      return res;
    },
    type(contentType: string) {
      return res.header('content-type', contentType);
    },
    send(body: unknown) {
      sent.body = body;
      return res;
    },
  };
  return { res, sent };
}

function answer(error: unknown) {
  const { res, sent } = fakeResponse();
  const logged: string[] = [];
  const host = {
    switchToHttp: () => ({
      getResponse: () => res,
      getRequest: () => ({ method: 'POST', url: '/v1/checkout' }),
    }),
  } as unknown as ArgumentsHost;
  const logger = {
    error: (m: { msg: string }) => logged.push(`error: ${m.msg}`),
    warn: (m: { msg: string }) => logged.push(`warn: ${m.msg}`),
  };
  new DomainErrorFilter(logger).catch(error, host);
  return { ...sent, logged };
}

/** What pg throws: a DatabaseError with a SQLSTATE, wrapped by TypeORM as QueryFailedError.driverError. */
const pgError = (code: string) => Object.assign(new Error('db'), { driverError: { code } });

describe('DomainErrorFilter', () => {
  it('answers a DomainError with the status of its code, its code and details', () => {
    const r = answer(new DomainError('ORDER_NOT_CANCELLABLE', 'paid', { status: 'PAID' }));
    assert.equal(r.status, 409);
    assert.deepEqual(r.body, { error: 'ORDER_NOT_CANCELLABLE', message: 'paid', status: 'PAID' });
    assert.equal(r.headers['retry-after'], undefined);
    assert.deepEqual(r.logged, []);
  });

  it('answers a subclass of DomainError like its base, from the one table', () => {
    class UnknownVoucher extends DomainError {
      constructor(code: string) {
        super('UNKNOWN_VOUCHER', `unknown voucher ${code}`, { voucherCode: code });
      }
    }
    const r = answer(new UnknownVoucher('X'));
    assert.equal(r.status, HTTP_ERRORS.UNKNOWN_VOUCHER.status);
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: 'UNKNOWN_VOUCHER', message: 'unknown voucher X', voucherCode: 'X' });
  });

  it('sends a retryAfterSeconds detail also as Retry-After', () => {
    const r = answer(new DomainError('GATE_TIMEOUT', 'slow gate', { retryable: true, retryAfterSeconds: 2 }));
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '2');
    assert.deepEqual(r.body, {
      error: 'GATE_TIMEOUT',
      message: 'slow gate',
      retryable: true,
      retryAfterSeconds: 2,
    });
  });

  it("answers a framework HttpException with its status's generic code", () => {
    const r = answer(new NotFoundException('Cannot GET /nope'));
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: 'NOT_FOUND', message: 'Cannot GET /nope' });
  });

  it('sends an HttpException that carries an error body as it is, with its status', () => {
    const r = answer(new HttpException({ error: 'PSP_UNAVAILABLE', message: 'the PSP had a problem' }, 502));
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, { error: 'PSP_UNAVAILABLE', message: 'the PSP had a problem' });
  });

  it('answers as JSON whatever type the route declared for its own answer', () => {
    for (const error of [
      new DomainError('VALIDATION_FAILED', 'orderId'),
      new NotFoundException(),
      new Error('x'),
    ]) {
      assert.equal(answer(error).headers['content-type'], 'application/json; charset=utf-8');
    }
  });

  it("takes the framework's own 500 (an answer fastify could not send) for a bug: INTERNAL, logged", () => {
    const r = answer(new HttpException("Attempted to send payload of invalid type 'object'.", 500));
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, { error: 'INTERNAL', message: 'internal error' });
    assert.deepEqual(r.logged, ['error: unexpected error: answered 500 INTERNAL']);
  });

  it('answers an unexpected error 500 INTERNAL without details and logs its cause', () => {
    const r = answer(new TypeError("Cannot read properties of undefined (reading 'id')"));
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, { error: 'INTERNAL', message: 'internal error' });
    assert.equal(r.headers['retry-after'], undefined);
    assert.deepEqual(r.logged, ['error: unexpected error: answered 500 INTERNAL']);
  });

  for (const [what, error] of [
    ['too many connections (53300)', pgError('53300')],
    ['a deadlock (40P01)', pgError('40P01')],
    ['a serialization failure (40001)', pgError('40001')],
    ['a database shutting down (57P01)', pgError('57P01')],
    ['a pool with no free connection in time', new Error('timeout exceeded when trying to connect')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
  ] as const) {
    it(`answers ${what} 503 SERVICE_UNAVAILABLE, retryable, with Retry-After, logged as a warning`, () => {
      const r = answer(error);
      assert.equal(r.status, 503);
      assert.equal(r.headers['retry-after'], '1');
      assert.deepEqual(r.body, {
        error: 'SERVICE_UNAVAILABLE',
        message:
          'a dependency of this service is unavailable; retry (a checkout with the same Idempotency-Key)',
        retryable: true,
        retryAfterSeconds: 1,
      });
      assert.deepEqual(r.logged, ['warn: dependency unavailable: answered 503']);
    });
  }

  it('does not take a unique violation (23505) for an outage: that is a bug, 500', () => {
    assert.equal(answer(pgError('23505')).status, 500);
  });
});
