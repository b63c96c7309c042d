import { randomBytes } from 'node:crypto';

/** Letters and digits a customer cannot misread (no 0/O, 1/I/L). */
export const VOUCHER_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** Shape of an apology voucher code: `SORRY-` and 10 characters of the alphabet. */
export const VOUCHER_CODE_PATTERN = /^SORRY-[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{10}$/;

/** A fresh apology voucher code (about 49 bits of randomness); `random` is injectable for tests. */
export function generateVoucherCode(random: (n: number) => Uint8Array = randomBytes): string {
  const bytes = random(10);
  let code = '';
  for (const b of bytes) code += VOUCHER_ALPHABET[b % VOUCHER_ALPHABET.length];
  return `SORRY-${code}`;
}
