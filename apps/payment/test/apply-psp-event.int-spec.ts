import { afterAll, beforeAll, beforeEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { PspWebhookEvent as PspEventSchema } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { scratchDatabase } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import {
  ApplyPspEventHandler,
  PspEvent,
} from '../src/payment/commands/apply-psp-event/apply-psp-event.handler';
import { MovePaymentHandler } from '../src/payment/commands/move-payment/move-payment.handler';
import { SettleRefundHandler } from '../src/payment/commands/settle-refund/settle-refund.handler';
import { PaymentMetrics } from '../src/payment/payment.metrics';

/**
 * ApplyPspEvent's refund rules on a scratch database: given a payment and its refund in some state, a refund
 * webhook event, expect these rows and these outbox events.
 */
describe('payment: refund webhooks through the refund state machine', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let ds: DataSource;
  let apply: ApplyPspEventHandler;
  let registry: Registry;
  let given: { paymentId: string; orderId: string; refundId: string; chargeId: string };

  beforeAll(async () => {
    scratch = await scratchDatabase('payment_refund_webhooks', MIGRATIONS, 2);
    ds = scratch.dataSource;
    registry = new Registry();
    const metrics = new PaymentMetrics(registry);
    const logger = new PinoLogger({ pinoHttp: { level: 'silent' } });
    const outbox = new OutboxWriter('payment');
    const move = new MovePaymentHandler(outbox, metrics, logger);
    apply = new ApplyPspEventHandler(
      ds,
      move,
      new SettleRefundHandler(outbox, move, metrics, logger),
      metrics,
    );
  });

  afterAll(() => scratch.drop());

  /** A succeeded acme payment of 50,000 VND with a refund in `refundState`. */
  const paymentWithRefund = async (
    refundState: 'pending' | 'refund_failed' | 'succeeded',
    pspRefundId: string | null = null,
    withPayment = true,
  ) => {
    const paymentId = randomUUID();
    const orderId = randomUUID();
    const refundId = randomUUID();
    const chargeId = `ch_${randomUUID()}`;
    const cause = JSON.stringify({ eventId: randomUUID(), correlationId: orderId, traceparent: null });
    if (withPayment)
      await ds.query(
        `INSERT INTO payment_attempt (id, tenant_id, order_id, state, amount, currency, payment_token, psp_account,
                                      idempotency_key, psp_ref, cause)
         VALUES ($1, 'acme', $2, 'succeeded', 50000, 'VND', 'tok_success', 'acct_acme', $3, $4, $5)`,
        [paymentId, orderId, `pay_${paymentId}`, chargeId, cause],
      );
    await ds.query(
      `INSERT INTO refund (id, tenant_id, order_id, payment_id, psp_account, psp_charge_id, amount, currency, reason,
                           state, idempotency_key, psp_refund_id, cause)
       VALUES ($1, 'acme', $2, $3, 'acct_acme', $4, 50000, 'VND', 'shipment_failed', $5, $6, $7, $8)`,
      [
        refundId,
        orderId,
        withPayment ? paymentId : null,
        chargeId,
        refundState,
        `refund:${refundId}`,
        pspRefundId,
        cause,
      ],
    );
    return { paymentId, orderId, refundId, chargeId };
  };

  const refundEvent = (
    type: 'refund.succeeded' | 'refund.failed',
    over: Partial<{ id: string; charge: string; amount: number; account: string }> = {},
  ): PspEvent =>
    PspEventSchema.parse({
      id: `evt_${randomUUID()}`,
      type,
      created: Math.floor(Date.now() / 1000),
      account: over.account ?? 'acct_acme',
      data: {
        object: {
          id: over.id ?? `re_${given.chargeId}`,
          object: 'refund',
          charge: over.charge ?? given.chargeId,
          amount: over.amount ?? 50_000,
          currency: 'VND',
          status: type === 'refund.succeeded' ? 'succeeded' : 'failed',
          failureReason: type === 'refund.failed' ? 'card_closed' : null,
        },
      },
    });

  /** What a delivery did, as the webhook answers it. */
  const outcomeOf = async (tenantId: string, event: PspEvent) =>
    (await apply.execute(tenantId, event)).outcome;

  const chargeSucceeded = (chargeId: string, paymentId: string): PspEvent =>
    PspEventSchema.parse({
      id: `evt_${randomUUID()}`,
      type: 'charge.succeeded',
      created: Math.floor(Date.now() / 1000),
      account: 'acct_acme',
      data: { object: { id: chargeId, reference: 'r', status: 'succeeded', metadata: { paymentId } } },
    });

  const state = async () => {
    const [p] = await ds.query(`SELECT state FROM payment_attempt WHERE id = $1`, [given.paymentId]);
    const [r] = await ds.query(`SELECT state, psp_refund_id, last_error FROM refund WHERE id = $1`, [
      given.refundId,
    ]);
    const events: { type: string; payload: { pspRefundId?: string } }[] = await ds.query(
      `SELECT type, payload->'payload' AS payload FROM outbox WHERE saga_id = $1 ORDER BY sequence`,
      [given.orderId],
    );
    const history: { to_state: string; source: string; psp_event_id: string | null }[] = await ds.query(
      `SELECT to_state, source, psp_event_id FROM payment_transition WHERE payment_id = $1 ORDER BY id`,
      [given.paymentId],
    );
    return { payment: p?.state as string | undefined, refund: r, events, history };
  };

  describe('given a pending refund (its answer lost)', () => {
    beforeEach(async () => {
      given = await paymentWithRefund('pending');
    });

    it('refund.succeeded completes it: payment refunded by the webhook, one payment.refunded; a redelivery is a duplicate', async () => {
      const event = refundEvent('refund.succeeded');
      assert.equal(await outcomeOf('acme', event), 'applied');
      assert.equal(await outcomeOf('acme', event), 'duplicate');
      const s = await state();
      assert.equal(s.payment, 'refunded');
      assert.equal(s.refund.state, 'succeeded');
      assert.equal(s.refund.psp_refund_id, `re_${given.chargeId}`);
      assert.deepEqual(s.history, [{ to_state: 'refunded', source: 'webhook', psp_event_id: event.id }]);
      assert.deepEqual(
        s.events.map((e) => [e.type, e.payload.pspRefundId]),
        [['payment.refunded', `re_${given.chargeId}`]],
      );
      const [row] = await ds.query(`SELECT outcome, payment_id FROM psp_event WHERE event_id = $1`, [
        event.id,
      ]);
      assert.deepEqual(row, { outcome: 'applied', payment_id: given.paymentId });
    });

    it('refund.failed parks it for an operator; the payment stays succeeded and nothing is published', async () => {
      assert.equal(await outcomeOf('acme', refundEvent('refund.failed')), 'applied');
      const s = await state();
      assert.equal(s.payment, 'succeeded');
      assert.equal(s.refund.state, 'refund_failed');
      assert.match(s.refund.last_error, /card_closed/);
      assert.deepEqual(s.events, []);
      assert.match(await registry.metrics(), /payment_refunds_parked_total [1-9]/);
    });

    it('an event about another charge, another amount or another tenant changes nothing', async () => {
      const foreign = [
        refundEvent('refund.succeeded', { charge: 'ch_somebody_else' }),
        refundEvent('refund.succeeded', { amount: 49_999 }),
      ];
      for (const e of foreign) assert.equal(await outcomeOf('acme', e), 'unmatched');
      // Signed by globex: looked up among globex's refunds only.
      assert.equal(
        await outcomeOf('globex', refundEvent('refund.succeeded', { account: 'acct_globex' })),
        'unmatched',
      );
      const s = await state();
      assert.equal(s.payment, 'succeeded');
      assert.equal(s.refund.state, 'pending');
      assert.deepEqual(s.events, []);
    });
  });

  it('given a parked refund, the PSP word that the money went back still completes it; a late failure is ignored', async () => {
    given = await paymentWithRefund('refund_failed');
    assert.equal(await outcomeOf('acme', refundEvent('refund.failed')), 'ignored', 'already parked');
    assert.equal(await outcomeOf('acme', refundEvent('refund.succeeded')), 'applied');
    assert.equal(
      await outcomeOf('acme', refundEvent('refund.failed')),
      'ignored',
      'never back from succeeded',
    );
    const s = await state();
    assert.equal(s.payment, 'refunded');
    assert.equal(s.refund.state, 'succeeded');
    assert.deepEqual(
      s.events.map((e) => e.type),
      ['payment.refunded'],
    );
  });

  it('given a refund the response already completed, its webhook is ignored and a refund id not ours is unmatched', async () => {
    given = await paymentWithRefund('succeeded', 're_ours');
    await ds.query(`UPDATE payment_attempt SET state = 'refunded' WHERE id = $1`, [given.paymentId]);
    assert.equal(await outcomeOf('acme', refundEvent('refund.succeeded', { id: 're_ours' })), 'ignored');
    assert.equal(await outcomeOf('acme', refundEvent('refund.succeeded', { id: 're_other' })), 'unmatched');
    const s = await state();
    assert.deepEqual(s.events, []);
    assert.deepEqual(s.history, []);
  });

  it("given an orphaned charge's refund (no payment of ours), refund.succeeded completes the refund only", async () => {
    given = await paymentWithRefund('pending', null, false);
    assert.equal(await outcomeOf('acme', refundEvent('refund.succeeded')), 'applied');
    const s = await state();
    assert.equal(s.payment, undefined);
    assert.equal(s.refund.state, 'succeeded');
    assert.deepEqual(s.events, []);
  });

  it('acknowledges event types it does not act on (deduped, ignored) and refuses a malformed refund event', async () => {
    given = await paymentWithRefund('pending');
    const other = PspEventSchema.parse({
      id: `evt_${randomUUID()}`,
      type: 'charge.dispute.created',
      created: 1,
      account: 'acct_acme',
      data: { object: { id: 'dp_1' } },
    });
    assert.equal(await outcomeOf('acme', other), 'ignored');
    assert.equal(await outcomeOf('acme', other), 'duplicate');
    // Each tenant has its own PSP account: the same event id of another account is another event.
    const globex = PspEventSchema.parse({ ...other, account: 'acct_globex' });
    assert.equal(await outcomeOf('globex', globex), 'ignored');
    assert.equal(await outcomeOf('globex', globex), 'duplicate');
    assert.deepEqual(
      await ds.query(`SELECT tenant_id, outcome FROM psp_event WHERE event_id = $1 ORDER BY tenant_id`, [
        other.id,
      ]),
      [
        { tenant_id: 'acme', outcome: 'ignored' },
        { tenant_id: 'globex', outcome: 'ignored' },
      ],
    );
    const malformed = { ...refundEvent('refund.succeeded'), data: { object: { id: 're_1', amount: '5' } } };
    assert.equal(PspEventSchema.safeParse(malformed).success, false, 'a known type is validated in full');
    assert.equal((await state()).refund.state, 'pending');
  });

  it('asks for the orphan sweep only for a captured charge no payment of ours holds, not for a late webhook', async () => {
    given = await paymentWithRefund('succeeded', null);
    // The attempt succeeded with this charge (its answer came first): the webhook tells nothing new.
    assert.deepEqual(await apply.execute('acme', chargeSucceeded(given.chargeId, given.paymentId)), {
      outcome: 'ignored',
      unaccountedCharge: false,
    });
    // A second charge for the same payment: money no attempt took.
    assert.deepEqual(await apply.execute('acme', chargeSucceeded(`ch_${randomUUID()}`, given.paymentId)), {
      outcome: 'ignored',
      unaccountedCharge: true,
    });
    // A charge naming no payment of this tenant.
    assert.deepEqual(await apply.execute('acme', chargeSucceeded(`ch_${randomUUID()}`, randomUUID())), {
      outcome: 'unmatched',
      unaccountedCharge: true,
    });
    // A redelivery changes nothing and asks for nothing.
    const late = chargeSucceeded(given.chargeId, given.paymentId);
    await apply.execute('acme', late);
    assert.deepEqual(await apply.execute('acme', late), { outcome: 'duplicate', unaccountedCharge: false });
  });
});
