import { createHmac } from 'node:crypto';

/** The `PSP-Signature` header of a webhook body: `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`. */
export function signatureHeader(
  secret: string,
  body: string,
  unixSeconds = Math.floor(Date.now() / 1000),
): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
