import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ConservationInput, checkConservation } from '@checkout/testing';
import { WaveResult } from '../replays/checkout-wave';
import { ReplayReport, replayPassed } from '../replays/replay-report';
import { formatReport, formatStock } from './report';

const order = (orderId: string, status: string, charged: boolean): ConservationInput['orders'][number] => ({
  orderId,
  order: {
    orderId,
    status,
    total: 50_000,
    currency: 'VND',
    paymentState: charged ? 'succeeded' : null,
    lines: [{ sku: 'FLASH', quantity: 1 }],
    updatedAt: '2026-12-02T12:00:01Z',
    history: [{ to: 'PENDING', cause: 'checkout', at: '2026-12-02T12:00:00Z' }],
  },
  payments: charged ? [{ state: 'succeeded' }] : [],
  ledger: {
    charges: charged ? [{ id: `ch_${orderId}`, amount: 50_000, currency: 'VND', status: 'succeeded' }] : [],
    refunds: [],
  },
});

const awaitingPayment = (orderId: string) => {
  const o = order(orderId, 'AWAITING_PAYMENT', false);
  o.order!.history!.push({ to: 'AWAITING_PAYMENT', cause: 'inventory.reserved', at: '2026-12-02T12:00:01Z' });
  return o;
};

/** Two units, three buyers, one stuck order when `stuck`. */
function report(stuck = false): ReplayReport {
  const stock = { sku: 'FLASH', available: 0, reserved: stuck ? 1 : 0, sold: stuck ? 1 : 2 };
  const input: ConservationInput = {
    skus: [{ sku: 'FLASH', initial: 2, stock, exclusive: true }],
    orders: [
      order('o1', 'SHIPPED', true),
      stuck ? awaitingPayment('o2') : order('o2', 'SHIPPED', true),
      order('o3', 'REJECTED', false),
    ],
  };
  const verdict = checkConservation(input);
  const result: WaveResult = {
    wave: {
      name: 'gate off',
      sku: 'FLASH',
      initial: 2,
      token: 'tok_success',
      shoppers: 3,
      unitPrice: 50_000,
    },
    answers: { accepted: 3, outOfStock: 0, other: {} },
    statuses: stuck ? { SHIPPED: 1, AWAITING_PAYMENT: 1, REJECTED: 1 } : { SHIPPED: 2, REJECTED: 1 },
    stock,
    charges: verdict.successfulCharges,
    refunds: verdict.refunds,
    chargedTwice: 0,
    sawUnknown: 0,
    verdict,
    input,
    wallMs: 4_420,
    checkoutsMs: 300,
    paidLatencyMs: stuck ? [2_630] : [2_630, 2_890],
    paidBeforeRequested: 0,
    paidMissing: 0,
    allEnded: !stuck,
    restarted: [],
  };
  return {
    title: 'flash sale, gate off',
    result,
    expectations: [{ ok: stock.sold === 2, text: `sold ${stock.sold} of 2 (expected 2)` }],
    contrast: 'vs the seed: sold 540 of 500',
    headline: `sold ${stock.sold} of 2`,
  };
}

describe('demo report', () => {
  it('prints stock as the seed does', () => {
    assert.equal(
      formatStock({ sku: 'X', available: 0, reserved: 0, sold: 500 }),
      'stock {available: 0, reserved: 0, sold: 500}',
    );
  });

  it('given a clean replay, prints its block and a clean verdict', () => {
    const r = report();

    assert.equal(replayPassed(r), true);
    assert.equal(
      formatReport([r]),
      [
        'flash sale, gate off : sold 2 of 2, stock {available: 0, reserved: 0, sold: 2}',
        '                       3 buyers: 3 accepted, 0 out of stock; orders REJECTED 1, SHIPPED 2',
        '                       charges 2, refunds 0, stuck 0; wall 4.42 s; accepted -> order.paid p50 2.63 s, p95 2.89 s (2 orders)',
        '                       conservation OK: 1 SKU, 3 orders (REJECTED 1, SHIPPED 2), charges 2, refunds 0, 100000 VND kept, stuck 0',
        '                       vs the seed: sold 540 of 500',
        '',
        'verdict: clean (1 replays: stock conserved, no order charged twice, money matches, every saga ended)',
      ].join('\n'),
    );
  });

  it('given a saga that did not end, names the broken promise and the stuck order with its last step', () => {
    const r = report(true);

    const text = formatReport([r]);

    assert.equal(replayPassed(r), false);
    assert.match(text, /FAILED: sold 1 of 2 \(expected 2\)/);
    assert.match(text, /stuck o2: AWAITING_PAYMENT after inventory\.reserved since 2026-12-02T12:00:01Z/);
    assert.match(text, /verdict: NOT clean \(flash sale, gate off\)$/);
  });
});
