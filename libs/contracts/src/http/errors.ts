import { z } from 'zod';

/** One problem of a request part, as a 400 VALIDATION_FAILED lists them (`path` is dotted, '' for the whole). */
export const ValidationIssue = z
  .object({ path: z.string(), message: z.string() })
  .meta({ id: 'ValidationIssue', description: 'One problem of a request part.' });
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/** The error body of every service: `{ error, message, ...details }`; details depend on the code. */
export const ErrorBody = z
  .looseObject({
    error: z.string().min(1).meta({ description: 'Stable error code (see docs/api.md).' }),
    message: z.string().meta({ description: 'What went wrong, for a person.' }),
    issues: z.array(ValidationIssue).optional().meta({ description: 'VALIDATION_FAILED: every problem.' }),
    retryable: z.boolean().optional().meta({ description: '503: the same request may be sent again.' }),
    retryAfterSeconds: z.number().int().min(0).optional(),
  })
  .meta({ id: 'Error', description: 'The error body of every service: { error, message, ...details }.' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** An error code with the HTTP status it is always answered with and what it means. */
export interface HttpErrorSpec {
  status: number;
  description: string;
}

/**
 * Every error code the public HTTP APIs answer, with its status: one table for the services, the OpenAPI
 * documents and docs/api.md. A code never changes its status.
 */
export const HTTP_ERRORS = {
  VALIDATION_FAILED: {
    status: 400,
    description:
      'A path parameter, query, header or body does not follow its schema, the body is not JSON, or a checkout currency differs from the price list; `issues` lists every problem.',
  },
  UNAUTHENTICATED: {
    status: 401,
    description:
      'No valid `Authorization: Bearer <tenant API key>` (the PSP simulator: no valid account secret key).',
  },
  WEBHOOK_UNAUTHENTICATED: {
    status: 401,
    description:
      'A PSP webhook whose `PSP-Signature` does not verify (unknown account, bad or stale signature).',
  },
  MALFORMED_REQUEST: {
    status: 400,
    description: 'The request is not valid HTTP/1.1 (refused by the HTTP parser); the connection is closed.',
  },
  NOT_FOUND: { status: 404, description: 'No such route on this port.' },
  UNKNOWN_SKU: {
    status: 404,
    description:
      'The tenant has no price (order) or no stock record (inventory) for the SKU; `skus` or `sku` names it.',
  },
  UNKNOWN_VOUCHER: {
    status: 404,
    description: 'The voucher code does not exist for this tenant; `voucherCode`.',
  },
  ORDER_NOT_FOUND: {
    status: 404,
    description: "No order with this id for this tenant (another tenant's order included).",
  },
  REFUND_NOT_PARKED: {
    status: 404,
    description: 'No parked (`refund_failed`) refund with this id for this tenant.',
  },
  SAGA_NOT_FOUND: {
    status: 404,
    description: 'The tracker has recorded no saga with this id for this tenant.',
  },
  OUT_OF_STOCK: {
    status: 409,
    description: 'The flash-sale gate has fewer units than asked; `sku`, `remaining`.',
  },
  PRICE_CHANGED: {
    status: 409,
    description: 'A `unitPrice` the shopper saw differs from the current price; `changed`, `currentPrices`.',
  },
  VOUCHER_EXHAUSTED: { status: 409, description: 'Every redemption of the voucher is taken; `voucherCode`.' },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    description: 'A request with the same Idempotency-Key is still being processed: retry with the same key.',
  },
  VOUCHER_EXISTS: { status: 409, description: 'A voucher with this code exists already; `code`.' },
  ORDER_NOT_CANCELLABLE: {
    status: 409,
    description:
      'The order is past the point where a customer may cancel (payment succeeded); `status`, `paymentState`.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    description: 'The request body is larger than the service accepts (BODY_LIMIT).',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    description: 'The body has a charset or content encoding the service does not read.',
  },
  REQUEST_HEADERS_TOO_LARGE: {
    status: 431,
    description:
      'The request line and headers exceed 16 KiB (a URL that long included); the connection is closed.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    description: 'The Idempotency-Key was used before with a different body: choose a new key.',
  },
  ORDER_TOTAL_TOO_LARGE: {
    status: 422,
    description: 'The order total exceeds what one order settles; `maxTotal`.',
  },
  ZERO_TOTAL: {
    status: 422,
    description: 'The order comes to 0 (a 100% voucher, a free SKU): nothing to charge.',
  },
  PRICE_OUT_OF_RANGE: {
    status: 422,
    description: 'The unit price exceeds the largest accepted; `maxUnitPrice`.',
  },
  INTERNAL: {
    status: 500,
    description: 'An unexpected error; logged by the service with its cause. No details.',
  },
  INVENTORY_UNAVAILABLE: {
    status: 502,
    description:
      'Inventory could not be asked for the available units to prime the gate: send `available` explicitly.',
  },
  GATE_TIMEOUT: {
    status: 503,
    description:
      'The flash-sale gate did not answer in time: nothing was created or held; retry with the same Idempotency-Key after `Retry-After` seconds (`retryable`, `retryAfterSeconds`).',
  },
  GATE_UNAVAILABLE: {
    status: 503,
    description: 'The flash-sale gate (Redis) is unavailable: the gate was not changed.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    description:
      'A dependency (database) is unavailable: nothing was decided; retry (a checkout with the same Idempotency-Key) after `Retry-After` seconds (`retryable`, `retryAfterSeconds`).',
  },
} as const satisfies Record<string, HttpErrorSpec>;
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** Codes the server answers for any request, before a route is chosen: no OpenAPI operation lists them. */
export const SERVER_ERRORS: readonly HttpErrorCode[] = [
  'MALFORMED_REQUEST',
  'NOT_FOUND',
  'REQUEST_HEADERS_TOO_LARGE',
];

/** The HTTP status of an error code of the table. */
export const httpStatusOf = (code: HttpErrorCode): number => HTTP_ERRORS[code].status;
