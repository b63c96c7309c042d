import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { CarrierRules, decideBooking, matchesPattern, trackingNumberOf } from './carrier-policy';
import { canMoveShipment } from './shipment-status';

const rules: CarrierRules = {
  carrier: 'sim-post',
  failSkus: ['UNSHIPPABLE-*', 'SKU-HAZMAT'],
  failCustomers: ['undeliverable-*'],
};
const request = (skus: string[], customerId = 'c1') => ({
  shipmentId: '0b7c6a8e-52a4-4c4e-9c43-2f0f5f7b8c11',
  customerId,
  lines: skus.map((sku) => ({ sku, quantity: 1 })),
});

describe('carrier booking rules', () => {
  it('books an ordinary shipment with a tracking number stable for the shipment id', () => {
    const decision = decideBooking(rules, request(['SKU-1']));
    assert.deepEqual(decision, {
      accepted: true,
      carrier: 'sim-post',
      trackingNumber: trackingNumberOf('sim-post', '0b7c6a8e-52a4-4c4e-9c43-2f0f5f7b8c11'),
    });
    assert.equal(
      trackingNumberOf('sim-post', '0b7c6a8e-52a4-4c4e-9c43-2f0f5f7b8c11'),
      'SIMP0B7C6A8E52A44C4E',
    );
  });

  it('refuses a shipment with a flagged SKU, naming every refused SKU once', () => {
    const decision = decideBooking(rules, request(['SKU-1', 'UNSHIPPABLE-9', 'SKU-HAZMAT', 'UNSHIPPABLE-9']));
    assert.deepEqual(decision, {
      accepted: false,
      carrier: 'sim-post',
      reason: 'carrier_refused_sku: UNSHIPPABLE-9, SKU-HAZMAT',
    });
  });

  it('refuses a customer whose address the carrier cannot reach', () => {
    const decision = decideBooking(rules, request(['SKU-1'], 'undeliverable-42'));
    assert.deepEqual(decision, {
      accepted: false,
      carrier: 'sim-post',
      reason: 'carrier_undeliverable_address',
    });
  });

  it('matches exact values, and prefixes only when the pattern ends in *', () => {
    assert.equal(matchesPattern('SKU-HAZMAT', 'SKU-HAZMAT'), true);
    assert.equal(matchesPattern('SKU-HAZMAT-2', 'SKU-HAZMAT'), false);
    assert.equal(matchesPattern('UNSHIPPABLE-', 'UNSHIPPABLE-*'), true);
    assert.equal(matchesPattern('unshippable-1', 'UNSHIPPABLE-*'), false);
  });

  it('with no rules configured, every shipment is booked', () => {
    const decision = decideBooking(
      { carrier: 'x', failSkus: [], failCustomers: [] },
      request(['UNSHIPPABLE-1']),
    );
    assert.equal(decision.accepted, true);
  });
});

describe('shipment status machine', () => {
  it('only a created shipment can be cancelled; failed and cancelled are final', () => {
    assert.equal(canMoveShipment('created', 'cancelled'), true);
    assert.equal(canMoveShipment('failed', 'cancelled'), false);
    assert.equal(canMoveShipment('cancelled', 'cancelled'), false);
    assert.equal(canMoveShipment('failed', 'created'), false);
  });
});
