import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import { Response } from 'express';
import { z } from 'zod';

/** An expected failure with a stable code, answered as `{ error, message, ...details }`. */
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

/** Turns every error into the product's error shape; unexpected errors become 500 INTERNAL without details. */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (error instanceof ApiError) {
      res.status(error.status).json({ error: error.code, message: error.message, ...error.details });
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
    res.status(500).json({ error: 'INTERNAL', message: 'internal error' });
    throw error; // let Nest's logger record it
  }
}
