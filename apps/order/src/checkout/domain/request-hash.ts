import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so the same request hashes the same whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 hex of a request body's canonical JSON: what an Idempotency-Key is bound to. */
export const requestHash = (body: unknown): string =>
  createHash('sha256').update(canonicalJson(body)).digest('hex');

/** The id under which a checkout holds flash-sale units: derived from its Idempotency-Key, so a retry holds nothing twice. */
export const gateHoldId = (idempotencyKey: string): string =>
  createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32);
