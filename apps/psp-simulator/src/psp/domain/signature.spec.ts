import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signatureHeader } from './signature';

describe('PSP-Signature header', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of "t.body"> with the tenant secret', () => {
    const body = '{"id":"evt_1"}';
    const expected = createHmac('sha256', 'whsec_test_0123456789').update(`1700000000.${body}`).digest('hex');
    assert.equal(signatureHeader('whsec_test_0123456789', body, 1700000000), `t=1700000000,v1=${expected}`);
  });

  it('differs per secret and per timestamp', () => {
    const a = signatureHeader('whsec_a_0123456789abc', 'x', 1);
    assert.notEqual(a, signatureHeader('whsec_b_0123456789abc', 'x', 1));
    assert.notEqual(a, signatureHeader('whsec_a_0123456789abc', 'x', 2));
  });
});
