import { z } from 'zod';
import { HttpErrorCode } from './errors';

/** One operation of a service's public HTTP API, as data: the OpenAPI document and docs/api.md come from it. */
export interface Endpoint {
  method: 'get' | 'put' | 'post' | 'delete';
  /** OpenAPI path template, e.g. `/v1/orders/{orderId}`. */
  path: string;
  summary: string;
  description?: string;
  /** Whether the tenant API key is required (`Authorization: Bearer <key>`); default true. */
  auth?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  /** A JSON request body: adds VALIDATION_FAILED, PAYLOAD_TOO_LARGE and UNSUPPORTED_MEDIA_TYPE. */
  body?: z.ZodType;
  ok: {
    status: number;
    description: string;
    schema: z.ZodType;
    /** Media type of the answer; default application/json. */
    mediaType?: string;
    headers?: Record<
      string,
      { description: string; schema: { type: 'string' | 'integer'; enum?: string[] } }
    >;
  };
  /** False for an operation that never reads the database (a static page): no 503 SERVICE_UNAVAILABLE. */
  database?: boolean;
  /** The operation's own error codes; the common ones (auth, body, 500, 503) are added. */
  errors: HttpErrorCode[];
}

/** A service's public HTTP API. */
export interface ServiceApi {
  service: string;
  title: string;
  description: string;
  /** Whether the service has a database: every operation may then answer 503 SERVICE_UNAVAILABLE. */
  database: boolean;
  endpoints: Endpoint[];
}

/** Every error code an operation can answer: its own, plus those of authentication, a body and the runtime. */
export function errorCodesOf(api: Pick<ServiceApi, 'database'>, endpoint: Endpoint): HttpErrorCode[] {
  const codes = new Set<HttpErrorCode>(endpoint.errors);
  if (endpoint.auth !== false) codes.add('UNAUTHENTICATED');
  if (endpoint.body) {
    codes.add('VALIDATION_FAILED');
    codes.add('PAYLOAD_TOO_LARGE');
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  codes.add('INTERNAL');
  if (api.database && endpoint.database !== false) codes.add('SERVICE_UNAVAILABLE');
  return [...codes];
}
