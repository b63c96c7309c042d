import { DomainError, ErrorCode } from '@checkout/contracts';

/** A DomainError the consumer runtime parks on the dead-letter topic at once instead of retrying. */
export class NonRetryableError extends DomainError {
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

/**
 * SQLSTATEs of a database that is away or overloaded rather than of a wrong event: admin/crash shutdown,
 * cannot connect now, too many connections, serialization failure, deadlock. Class 08 (connection exception)
 * is matched by its prefix.
 */
const INFRASTRUCTURE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);

/** Socket errors of a peer that is down, restarting or unreachable. */
const INFRASTRUCTURE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** What pg and pg-pool say, without a code, when a connection is lost or cannot be had in time. */
const INFRASTRUCTURE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection timeout|encountered a connection error|database system is (starting up|shutting down|in recovery)|terminating connection/i;

/**
 * Whether an error comes from the infrastructure (a database restart, failover, pool exhaustion, a lost
 * connection, a deadlock or serialization failure) and will go away by itself: the consumer runtime retries
 * those without limit instead of parking the event. Looks through TypeORM's driverError and causes.
 */
export function isInfrastructureError(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof e.code === 'string') {
    if (INFRASTRUCTURE_SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
    if (INFRASTRUCTURE_NODE_CODES.has(e.code)) return true;
  }
  if (typeof e.message === 'string' && INFRASTRUCTURE_MESSAGES.test(e.message)) return true;
  const inner = [e.driverError, e.cause, ...(Array.isArray(e.errors) ? e.errors : [])];
  return inner.some((i) => i !== error && isInfrastructureError(i, depth + 1));
}
