import { HTTP_ERRORS, HttpErrorCode } from './http/errors';

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
 * The codes that are no answer of the public HTTP APIs, with the status each would get: Nest's own answers by
 * status, the PSP simulator's (a Stripe-like external API), and the consumers' DLQ reason codes.
 */
const OTHER_ERROR_STATUS = {
  FORBIDDEN: 403,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  UNPROCESSABLE: 422,
  TOO_MANY_REQUESTS: 429,
  // The PSP simulator's answers.
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

/** A stable error code: a public one of HTTP_ERRORS or one of the others above. */
export type ErrorCode = HttpErrorCode | keyof typeof OTHER_ERROR_STATUS;

/** Whether a string is a stable error code. */
export const isErrorCode = (code: string): code is ErrorCode =>
  Object.hasOwn(HTTP_ERRORS, code) || Object.hasOwn(OTHER_ERROR_STATUS, code);

/** The HTTP status a code is always answered with: HTTP_ERRORS for the public codes, the table above for the rest. */
export const statusOfError = (code: ErrorCode): number =>
  Object.hasOwn(HTTP_ERRORS, code)
    ? HTTP_ERRORS[code as HttpErrorCode].status
    : OTHER_ERROR_STATUS[code as keyof typeof OTHER_ERROR_STATUS];

/**
 * An expected failure with a stable code: answered `{ error: code, message, ...details }`, or parked with its code.
 * It is an answer, not a fault, so it captures no stack trace: capturing one was 2% of the order service's CPU while
 * a sold-out flash sale refused 1,400 checkouts a second (bench/results/profiles/s33/http-prof).
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    this.details = details;
    this.name = new.target.name;
  }

  /** The HTTP status of the code. */
  get status(): number {
    return statusOfError(this.code);
  }
}
