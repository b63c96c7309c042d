import { ArgumentsHost, Catch, ExceptionFilter, HttpException, LoggerService } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode, statusOfError } from '@checkout/contracts';
import { isInfrastructureError } from '@checkout/messaging';

/** Retry-After of a 503 SERVICE_UNAVAILABLE: long enough for a pool to free a connection, short for a buyer. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** The code of a framework HttpException (an unknown route, a wrong method), by its status. */
const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'TOO_MANY_REQUESTS',
};

/** A database or pool that is away: nothing was decided, the client retries (a checkout with the same key). */
const serviceUnavailable = () =>
  new DomainError(
    'SERVICE_UNAVAILABLE',
    'a dependency of this service is unavailable; retry (a checkout with the same Idempotency-Key)',
    { retryable: true, retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
  );

/** Whether an HttpException's body is the product's error shape with a CODE (Nest's own say `Not Found`). */
const isErrorBody = (body: unknown): body is { error: string; message: string } =>
  typeof body === 'object' &&
  body !== null &&
  /^[A-Z][A-Z0-9_]*$/.test(String((body as { error?: unknown }).error)) &&
  typeof (body as { message?: unknown }).message === 'string';

/**
 * Sends an error answer as JSON, whatever type the route declared for its own answer (a page's `text/html`).
 */
function send(res: FastifyReply, status: number, body: object): void {
  void res.code(status).type('application/json; charset=utf-8').send(body);
}

/** The one exception filter of every service: `{ error, message, ...details }` (docs/contributing.md, Errors). */
@Catch()
export class DomainErrorFilter implements ExceptionFilter {
  constructor(private readonly logger?: Pick<LoggerService, 'error' | 'warn'>) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<FastifyReply>();
    if (error instanceof DomainError) {
      this.answer(res, error);
      return;
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      const body = error.getResponse();
      if (isErrorBody(body)) {
        send(res, status, body);
        return;
      }
      // Fastify's own failures reach here as a bare 500 (an answer it could not send): a bug, answered below.
      if (status !== 500) {
        send(res, status, { error: STATUS_CODES[status] ?? `HTTP_${status}`, message: error.message });
        return;
      }
    }
    const req = http.getRequest<FastifyRequest | undefined>();
    // A database that is restarting, a pool with no free connection in time, a deadlock: nothing was decided
    // (the transaction rolled back), so the client is told to retry. Not an INTERNAL: no bug to page anyone about.
    if (isInfrastructureError(error) && !res.sent) {
      this.logger?.warn?.(
        {
          err: error,
          method: req?.method,
          url: req?.url,
          msg: 'dependency unavailable: answered 503',
        },
        'DomainErrorFilter',
      );
      this.answer(res, serviceUnavailable());
      return;
    }
    const cause = {
      err: error instanceof Error ? error : new Error(String(error)),
      method: req?.method,
      url: req?.url,
    };
    // Nest's LoggerService contract: the last argument is the context; pino takes the message from `msg`.
    if (this.logger)
      this.logger.error({ ...cause, msg: 'unexpected error: answered 500 INTERNAL' }, 'DomainErrorFilter');
    else console.error(JSON.stringify({ level: 'error', msg: 'unexpected error', err: String(error) }));
    // Part of a response already went out: it cannot be completed, so the connection cannot be reused.
    if (res.sent || res.raw.headersSent) {
      res.raw.destroy();
      return;
    }
    send(res, 500, { error: 'INTERNAL', message: 'internal error' });
  }

  /** Answers a DomainError with the status of its code. */
  private answer(res: FastifyReply, error: DomainError): void {
    const retryAfter = error.details.retryAfterSeconds;
    if (typeof retryAfter === 'number') void res.header('Retry-After', String(retryAfter));
    send(res, statusOfError(error.code), { error: error.code, message: error.message, ...error.details });
  }
}
