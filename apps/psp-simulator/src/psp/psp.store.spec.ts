import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PspJournal } from './psp.journal';
import { PspRequestError, PspStore } from './psp.store';

const input = { amount: 50_000, currency: 'VND', token: 'tok_success', reference: 'order-1', metadata: {} };

describe('PSP store journal: a restarted simulator keeps its state', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'psp-journal-')), 'state.jsonl');

  it('replays charges, refunds, events, deliveries and Idempotency-Keys written before the restart', () => {
    const path = file();
    const before = new PspStore(new PspJournal(path));
    const charge = before.createCharge('acct_a', 'key-1', input, 'pending').object;
    before.settle(charge.id, 'succeeded');
    const refund = before.createRefund('acct_a', 'refund-key', { charge: charge.id }).object;
    before.newEvent('refund.succeeded', refund);
    before.recordDelivery({
      eventId: 'evt_1',
      type: 'refund.succeeded',
      reference: 'order-1',
      status: 200,
      error: null,
      at: '',
    });

    const after = new PspStore(new PspJournal(path));

    assert.deepEqual(after.ledger('order-1'), before.ledger('order-1'));
    assert.equal(after.charges.get(charge.id)?.status, 'succeeded');
    assert.equal(after.charges.get(charge.id)?.refunded, true);
    // The same keys replay the same objects: no second charge, no second refund after the restart.
    assert.deepEqual(after.createCharge('acct_a', 'key-1', input, 'pending'), {
      object: after.charges.get(charge.id),
      replayed: true,
    });
    assert.equal(after.createRefund('acct_a', 'refund-key', { charge: charge.id }).replayed, true);
    assert.throws(
      () => after.createRefund('acct_a', 'another-key', { charge: charge.id }),
      (e: unknown) => e instanceof PspRequestError && e.code === 'CHARGE_ALREADY_REFUNDED',
    );
    assert.equal(after.charges.size, 1);
  });

  it('skips a torn last line (a crash mid-write) and keeps the rest', () => {
    const path = file();
    const before = new PspStore(new PspJournal(path));
    before.createCharge('acct_a', 'key-1', input, 'succeeded');
    appendFileSync(path, '{"t":"charge","v":{"id":"ch_tor');
    assert.equal(new PspStore(new PspJournal(path)).charges.size, 1);
  });

  it('without a journal the state lives in memory only', () => {
    const store = new PspStore();
    store.createCharge('acct_a', 'key-1', input, 'succeeded');
    assert.equal(new PspStore().charges.size, 0);
  });

  it("answers a ledger and a list by reference with that reference's objects only, as they are now", () => {
    const store = new PspStore();
    const mine = store.createCharge('acct_a', 'key-1', input, 'pending').object;
    for (let i = 0; i < 50; i += 1)
      store.createCharge('acct_a', `other-${i}`, { ...input, reference: `order-${i + 2}` }, 'succeeded');
    store.settle(mine.id, 'succeeded');
    const refund = store.createRefund('acct_a', 'refund-key', { charge: mine.id }).object;
    store.newEvent('refund.succeeded', refund);
    const ledger = store.ledger('order-1');
    assert.deepEqual(
      ledger.charges.map((c) => [c.id, c.status, c.refunded]),
      [[mine.id, 'succeeded', true]],
    );
    assert.deepEqual(
      ledger.refunds.map((r) => r.id),
      [refund.id],
    );
    assert.deepEqual(
      ledger.events.map((e) => e.type),
      ['refund.succeeded'],
    );
    assert.deepEqual(
      store.listCharges('acct_a', { reference: 'order-1', limit: 10 }).map((c) => c.id),
      [mine.id],
    );
    assert.deepEqual(store.listCharges('acct_b', { reference: 'order-1', limit: 10 }), []);
    assert.deepEqual(store.ledger('order-unknown'), { charges: [], refunds: [], events: [], deliveries: [] });
  });
});
