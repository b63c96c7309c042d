import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ContractViolation,
  SAGA_TOPICS,
  dlqTopic,
  jsonSchemaOf,
  parseEvent,
  validateEvent,
} from './registry';

// libs/contracts (this spec runs from src/ under jest)
const root = join(__dirname, '..');
const golden = () => JSON.parse(readFileSync(join(root, 'fixtures', 'order.paid.v1.json'), 'utf8'));

const violation = (fn: () => unknown, code: ContractViolation['code'], pattern?: RegExp) =>
  assert.throws(
    fn,
    (e: unknown) =>
      e instanceof ContractViolation && e.code === code && (!pattern || pattern.test(e.message)),
  );

describe('contracts registry', () => {
  it('accepts the golden order.paid v1 message that consumer teams build against', () => {
    const event = validateEvent(golden());
    assert.equal(event.type, 'order.paid');
    assert.deepEqual(event, golden());
  });

  it('accepts the golden fulfillment.apology-voucher-issued v1 message and refuses a reusable or malformed code', () => {
    const fixture = () =>
      JSON.parse(readFileSync(join(root, 'fixtures', 'fulfillment.apology-voucher-issued.v1.json'), 'utf8'));
    const event = validateEvent(fixture());
    assert.equal(event.type, 'fulfillment.apology-voucher-issued');
    assert.deepEqual(event, fixture());
    assert.doesNotThrow(() =>
      validateEvent({ ...fixture(), payload: { ...fixture().payload, customerId: null } }),
    );
    const reusable = fixture();
    reusable.payload.maxRedemptions = 2;
    violation(() => validateEvent(reusable), 'CONTRACT.INVALID_PAYLOAD', /maxRedemptions/);
    const spaced = fixture();
    spaced.payload.code = 'SORRY 10';
    violation(() => validateEvent(spaced), 'CONTRACT.INVALID_PAYLOAD', /payload\.code/);
  });

  it('tells malformed JSON, a bad envelope, an unknown type or version and a bad payload apart', () => {
    violation(() => parseEvent('{not json'), 'CONTRACT.MALFORMED_JSON');
    violation(() => validateEvent({ ...golden(), eventId: 'nope' }), 'CONTRACT.INVALID_ENVELOPE', /eventId/);
    violation(
      () => validateEvent({ ...golden(), traceparent: 'xyz' }),
      'CONTRACT.INVALID_ENVELOPE',
      /traceparent/,
    );
    violation(() => validateEvent({ ...golden(), type: 'order.shipped-by-drone' }), 'CONTRACT.UNKNOWN_TYPE');
    violation(() => validateEvent({ ...golden(), version: 2 }), 'CONTRACT.UNKNOWN_TYPE', /version 2/);
    const negative = golden();
    negative.payload.lines[0].quantity = -1;
    violation(() => validateEvent(negative), 'CONTRACT.INVALID_PAYLOAD', /payload\.lines\.0\.quantity/);
    const float = golden();
    float.payload.total = 450.5;
    violation(() => validateEvent(float), 'CONTRACT.INVALID_PAYLOAD', /payload\.total/);
    const missing = golden();
    delete missing.payload.orderId;
    violation(() => validateEvent(missing), 'CONTRACT.INVALID_PAYLOAD', /orderId/);
  });

  it('keeps fields added later optional: an older v1 consumer still parses a message with unknown extra fields', () => {
    const withExtra = { ...golden(), payload: { ...golden().payload, giftWrap: true } };
    assert.doesNotThrow(() => validateEvent(withExtra));
  });

  it('publishes a JSON Schema per event that matches the files checked in under schemas/', () => {
    for (const type of SAGA_TOPICS) {
      const published = JSON.parse(readFileSync(join(root, 'schemas', `${type}.v1.json`), 'utf8'));
      assert.deepEqual(
        published,
        jsonSchemaOf(type, 1),
        `${type}: run node libs/contracts/dist/src/publish-schemas.js`,
      );
    }
  });

  it('names the dead-letter topic after the topic', () => {
    assert.equal(dlqTopic('order.created'), 'order.created.dlq');
  });
});
