/** The services whose consumers park events with `<SERVICE>.<RULE>` codes. */
export type ServiceCode = 'ORDER' | 'INVENTORY' | 'PAYMENT' | 'FULFILLMENT' | 'SAGA';

/** The admission rules every consumer checks before its handler (InboxTransport `admission`). */
export type AdmissionRule = 'UNKNOWN_TENANT' | 'SAGA_MISMATCH' | 'TENANT_MISMATCH';

const admission = <S extends ServiceCode>(service: S) =>
  ({
    [`${service}.UNKNOWN_TENANT`]: 422,
    [`${service}.SAGA_MISMATCH`]: 422,
    [`${service}.TENANT_MISMATCH`]: 422,
  }) as Record<`${S}.${AdmissionRule}`, 422>;

/**
 * Every stable error code and the HTTP status it is answered with: the exception filter answers a request
 * from it, and a consumer parks an event on its DLQ with the same code. A code never changes its status.
 */
export const ERROR_STATUS = {
  // Public HTTP codes (docs/api.md): never renamed.
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  WEBHOOK_UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  UNKNOWN_SKU: 404,
  UNKNOWN_VOUCHER: 404,
  ORDER_NOT_FOUND: 404,
  REFUND_NOT_PARKED: 404,
  SAGA_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  OUT_OF_STOCK: 409,
  PRICE_CHANGED: 409,
  VOUCHER_EXHAUSTED: 409,
  VOUCHER_EXISTS: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORDER_NOT_CANCELLABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  ORDER_TOTAL_TOO_LARGE: 422,
  ZERO_TOTAL: 422,
  PRICE_OUT_OF_RANGE: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  INVENTORY_UNAVAILABLE: 502,
  GATE_TIMEOUT: 503,
  GATE_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
  // The PSP simulator's answers (a Stripe-like external API).
  TOKEN_INVALID: 400,
  CHARGE_NOT_CAPTURED: 400,
  CHARGE_ALREADY_REFUNDED: 400,
  AMOUNT_TOO_LARGE: 400,
  NO_SUCH_CHARGE: 404,
  // Consumer (DLQ reason) codes: an event that breaks a rule is parked with one of these, never retried.
  'CONTRACT.MALFORMED_JSON': 400,
  'CONTRACT.INVALID_ENVELOPE': 400,
  'CONTRACT.UNKNOWN_TYPE': 400,
  'CONTRACT.INVALID_PAYLOAD': 400,
  ...admission('ORDER'),
  ...admission('INVENTORY'),
  ...admission('PAYMENT'),
  ...admission('FULFILLMENT'),
  ...admission('SAGA'),
  'ORDER.VOUCHER_CODE_TAKEN': 409,
  'INVENTORY.LINE_TOO_LARGE': 422,
  'INVENTORY.NO_RESERVATION': 409,
  'PAYMENT.NO_PSP_ACCOUNT': 422,
  'SAGA.UNCLASSIFIED_TYPE': 422,
  /** A handler failed for another reason than a rule, `maxAttempts` times (the DLQ code of an unexpected error). */
  HANDLER_FAILED: 500,
} as const satisfies Record<string, number>;

/** A stable error code of the table. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Whether a string is a code of the table. */
export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_STATUS, code);

/** An expected failure with a stable code: answered `{ error: code, message, ...details }`, or parked with its code. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** The HTTP status of the code (ERROR_STATUS). */
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}
