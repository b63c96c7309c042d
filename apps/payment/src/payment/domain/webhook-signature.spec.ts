import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { parseSignatureHeader, verifySignature } from './webhook-signature';

const secret = 'whsec_acme_dev_0123456789';
const body = '{"id":"evt_1","type":"charge.succeeded"}';
const now = 1_800_000_000;
const sign = (t: number, b = body, s = secret) =>
  `t=${t},v1=${createHmac('sha256', s).update(`${t}.${b}`).digest('hex')}`;

describe('webhook signature', () => {
  it('accepts a correct signature within the tolerance', () => {
    assert.equal(verifySignature(sign(now - 10), body, secret, 300, now), null);
    assert.equal(verifySignature(sign(now), Buffer.from(body), secret, 300, now), null);
  });

  it('accepts when any of several v1 values matches (secret rotation)', () => {
    const header = `${sign(now)},v1=${'0'.repeat(64)}`;
    assert.equal(verifySignature(header, body, secret, 300, now), null);
  });

  it('refuses a missing or malformed header', () => {
    assert.equal(verifySignature(undefined, body, secret, 300, now), 'SIGNATURE_MISSING');
    assert.equal(verifySignature('', body, secret, 300, now), 'SIGNATURE_MISSING');
    assert.equal(verifySignature('v1=abc', body, secret, 300, now), 'SIGNATURE_MALFORMED');
    assert.equal(verifySignature(`t=${now}`, body, secret, 300, now), 'SIGNATURE_MALFORMED');
    assert.equal(verifySignature(`t=x,v1=${'a'.repeat(64)}`, body, secret, 300, now), 'SIGNATURE_MALFORMED');
  });

  it('refuses another secret, a changed body or a changed timestamp', () => {
    assert.equal(
      verifySignature(sign(now, body, 'whsec_globex_dev_0123456789'), body, secret, 300, now),
      'SIGNATURE_MISMATCH',
    );
    assert.equal(
      verifySignature(sign(now), body.replace('succeeded', 'failed'), secret, 300, now),
      'SIGNATURE_MISMATCH',
    );
    const forged = sign(now).replace(`t=${now}`, `t=${now + 1}`);
    assert.equal(verifySignature(forged, body, secret, 300, now), 'SIGNATURE_MISMATCH');
  });

  it('refuses a stale or future timestamp even when correctly signed', () => {
    assert.equal(verifySignature(sign(now - 301), body, secret, 300, now), 'TIMESTAMP_OUT_OF_TOLERANCE');
    assert.equal(verifySignature(sign(now + 301), body, secret, 300, now), 'TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it('parses t and every v1', () => {
    assert.deepEqual(parseSignatureHeader(`t=5,v1=${'a'.repeat(64)},v1=${'b'.repeat(64)}`), {
      t: 5,
      v1: ['a'.repeat(64), 'b'.repeat(64)],
    });
  });
});
