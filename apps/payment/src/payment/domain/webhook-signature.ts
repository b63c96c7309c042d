import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a webhook signature was refused (always answered 401). */
export type SignatureProblem =
  'SIGNATURE_MISSING' | 'SIGNATURE_MALFORMED' | 'SIGNATURE_MISMATCH' | 'TIMESTAMP_OUT_OF_TOLERANCE';

/** The parts of a `PSP-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` header, or null when it is not one. */
export function parseSignatureHeader(header: string | undefined): { t: number; v1: string[] } | null {
  if (!header) return null;
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const [k, v, ...rest] = part.trim().split('=');
    if (rest.length > 0 || v === undefined) return null;
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) v1.push(v);
  }
  return t === undefined || v1.length === 0 ? null : { t, v1 };
}

/**
 * Checks a webhook: HMAC-SHA256 of `t.body` with the tenant's secret, compared in constant time, and `t`
 * within `toleranceSeconds` of now (a replayed old delivery is refused). Returns null when it is valid.
 */
export function verifySignature(
  header: string | undefined,
  rawBody: Buffer | string,
  secret: string,
  toleranceSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): SignatureProblem | null {
  if (!header) return 'SIGNATURE_MISSING';
  const parsed = parseSignatureHeader(header);
  if (!parsed) return 'SIGNATURE_MALFORMED';
  const expected = createHmac('sha256', secret)
    .update(`${parsed.t}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest();
  const matches = parsed.v1.some((candidate) => timingSafeEqual(Buffer.from(candidate, 'hex'), expected));
  if (!matches) return 'SIGNATURE_MISMATCH';
  if (Math.abs(nowSeconds - parsed.t) > toleranceSeconds) return 'TIMESTAMP_OUT_OF_TOLERANCE';
  return null;
}
