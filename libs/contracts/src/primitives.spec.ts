import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ExternalId, VoucherCode } from './primitives';

describe('ExternalId: merchant-chosen ids, any script, nothing invisible', () => {
  const id = ExternalId(128, 'customerId');

  it('accepts ids in any script, with inner spaces and punctuation', () => {
    for (const ok of ['cust-42', 'nguyễn.văn.a@example.vn', 'Ζωή Δ.', '顧客 123', 'a', 'x'.repeat(128)])
      assert.equal(id.safeParse(ok).success, true, JSON.stringify(ok));
  });

  it('refuses control, format and separator characters, blank ends, empty and oversized ids', () => {
    const bad = [
      'cust\n{"msg":"forged"}',
      'cust\r',
      'cust\t',
      'cust\u0000',
      'cust\u001b[2J',
      'cust\u007f',
      'cust\u0085',
      'cust\u202egpj.exe',
      'cust\u200b',
      'cust\ufeff',
      'cust\u2028',
      ' cust',
      'cust ',
      '',
      'x'.repeat(129),
    ];
    for (const value of bad) {
      const r = id.safeParse(value);
      assert.equal(r.success, false, JSON.stringify(value));
    }
    assert.match(
      id.safeParse('a\nb').error!.issues[0].message,
      /customerId must not contain control or invisible characters/,
    );
  });
});

describe('VoucherCode', () => {
  it('accepts the merchant and apology codes and refuses anything else', () => {
    assert.equal(VoucherCode.safeParse('SORRY-ABCDEFGH23').success, true);
    assert.equal(VoucherCode.safeParse('SAVE_10').success, true);
    for (const bad of ['SAVE10\r\n', '-SAVE', 'SAVE 10', 'x'.repeat(65), ''])
      assert.equal(VoucherCode.safeParse(bad).success, false, JSON.stringify(bad));
  });
});
