import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  LoggerService,
} from '@nestjs/common';
import { Request, Response } from 'express';
import { z } from 'zod';
import { ErrorBody } from '@checkout/contracts';
import { isInfrastructureError } from '@checkout/messaging';

/** Retry-After of a 503 SERVICE_UNAVAILABLE: long enough for a pool to free a connection, short for a buyer. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** An expected failure with a stable code, answered as ErrorBody `{ error, message, ...details }` (docs/api.md). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Parses a request part with a zod schema, or throws 400 VALIDATION_FAILED listing every problem. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ApiError(HttpStatus.BAD_REQUEST, 'VALIDATION_FAILED', `invalid ${what}`, {
    issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}

const STATUS_CODES: Record<number, string> = {
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

/**
 * Turns every error into the product's error shape; an unexpected error becomes 500 INTERNAL without details
 * and its real cause (message, stack, route) is logged here, once. Nothing is rethrown: the answer is complete
 * and the keep-alive connection stays usable.
 */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  constructor(private readonly logger?: Pick<LoggerService, 'error' | 'warn'>) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    if (error instanceof ApiError) {
      const body: ErrorBody = { error: error.code, message: error.message, ...error.details };
      res.status(error.status).json(body);
      return;
    }
    // body-parser errors: malformed JSON, oversized body, wrong charset.
    const parserError = error as { type?: string; status?: number; message?: string };
    if (parserError?.type === 'entity.parse.failed') {
      res.status(400).json({ error: 'VALIDATION_FAILED', message: 'request body is not valid JSON' });
      return;
    }
    if (parserError?.type === 'entity.too.large') {
      res.status(413).json({ error: 'PAYLOAD_TOO_LARGE', message: 'request body is too large' });
      return;
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      res.status(status).json({ error: STATUS_CODES[status] ?? `HTTP_${status}`, message: error.message });
      return;
    }
    const req = http.getRequest<Request>();
    // A database that is restarting, a pool with no free connection in time, a deadlock: nothing was decided
    // (the transaction rolled back), so the client is told to retry; a checkout retries with the same
    // Idempotency-Key, which is what the key is for. Not an INTERNAL: no bug to page anyone about.
    if (isInfrastructureError(error) && !res.headersSent) {
      this.logger?.warn?.(
        {
          err: error,
          method: req?.method,
          url: req?.originalUrl ?? req?.url,
          msg: 'dependency unavailable: answered 503',
        },
        'ApiErrorFilter',
      );
      res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      res.status(503).json({
        error: 'SERVICE_UNAVAILABLE',
        message:
          'a dependency of this service is unavailable; retry (a checkout with the same Idempotency-Key)',
        retryable: true,
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      });
      return;
    }
    const cause = {
      err: error instanceof Error ? error : new Error(String(error)),
      method: req?.method,
      url: req?.originalUrl ?? req?.url,
    };
    // Nest's LoggerService contract: the last argument is the context; pino takes the message from `msg`.
    if (this.logger)
      this.logger.error({ ...cause, msg: 'unexpected error: answered 500 INTERNAL' }, 'ApiErrorFilter');
    else console.error(JSON.stringify({ level: 'error', msg: 'unexpected error', err: String(error) }));
    // Part of a response already went out: it cannot be completed, so the connection cannot be reused.
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(500).json({ error: 'INTERNAL', message: 'internal error' });
  }
}
