import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ConservationInput, checkConservation, fetchConservationInput, formatVerdict } from './conservation';

type OrderEntry = ConservationInput['orders'][number];

const charge = (id: string, amount: number, status = 'succeeded') => ({
  id,
  amount,
  currency: 'VND',
  status,
});
const refund = (id: string, chargeId: string, amount: number) => ({
  id,
  charge: chargeId,
  amount,
  currency: 'VND',
  status: 'succeeded',
});
const order = (
  orderId: string,
  status: string,
  total = 50_000,
  extra: Partial<OrderEntry> = {},
): OrderEntry => ({
  orderId,
  order: {
    orderId,
    status,
    total,
    currency: 'VND',
    paymentState: null,
    lines: [{ sku: 'HEADPHONES', quantity: 1 }],
    history: [],
  },
  payments: [],
  ledger: { charges: [], refunds: [] },
  ...extra,
});
const paid = (orderId: string, status = 'SHIPPED', total = 50_000): OrderEntry =>
  order(orderId, status, total, {
    payments: [{ state: 'succeeded' }],
    ledger: { charges: [charge(`ch_${orderId}`, total)], refunds: [] },
  });

/** The seed's flash sale done right: 3 units, 3 shipped, 1 rejected, 1 refunded. */
const cleanRun = (): ConservationInput => ({
  skus: [{ sku: 'HEADPHONES', initial: 5, stock: { sku: 'HEADPHONES', available: 2, reserved: 0, sold: 3 } }],
  orders: [
    paid('o1'),
    paid('o2'),
    paid('o3'),
    order('o4', 'REJECTED'),
    order('o5', 'REFUNDED', 50_000, {
      payments: [{ state: 'refunded' }],
      ledger: { charges: [charge('ch_o5', 50_000)], refunds: [refund('re_o5', 'ch_o5', 50_000)] },
    }),
  ],
});

describe('conservation checker', () => {
  it('given a clean run, the verdict is clean and the summary gives the headline numbers', () => {
    const verdict = checkConservation(cleanRun());

    assert.equal(verdict.ok, true);
    assert.equal(verdict.clean, true);
    assert.deepEqual(verdict.violations, []);
    assert.deepEqual(verdict.byStatus, { SHIPPED: 3, REJECTED: 1, REFUNDED: 1 });
    assert.deepEqual(verdict.money, [{ currency: 'VND', charged: 200_000, refunded: 50_000, kept: 150_000 }]);
    assert.equal(
      formatVerdict(verdict),
      'conservation OK: 1 SKU, 5 orders (REFUNDED 1, REJECTED 1, SHIPPED 3), charges 4, refunds 1, 150000 VND kept, stuck 0',
    );
  });

  it("given lost updates (the seed's 499 in stock after 540 sales), stock is not conserved", () => {
    const input = cleanRun();
    input.skus = [{ sku: 'HP', initial: 500, stock: { sku: 'HP', available: 499, reserved: 0, sold: 540 } }];

    const verdict = checkConservation(input);

    assert.equal(verdict.ok, false);
    assert.deepEqual(verdict.violations, [
      {
        kind: 'stock_not_conserved',
        subject: 'HP',
        message: 'HP: initial 500 != available 499 + reserved 0 + sold 540 = 1039',
      },
    ]);
  });

  it('counts returned units when inventory reports them, and flags negative counters and unknown SKUs', () => {
    const input = cleanRun();
    input.skus = [
      { sku: 'A', initial: 10, stock: { sku: 'A', available: 5, reserved: 1, sold: 2, returned: 2 } },
      { sku: 'B', initial: 0, stock: { sku: 'B', available: -1, reserved: 0, sold: 1 } },
      { sku: 'C', initial: 3, stock: null },
    ];

    const kinds = checkConservation(input).violations.map((v) => `${v.kind}:${v.subject}`);

    assert.deepEqual(kinds, ['negative_stock:B', 'missing_sku:C']);
  });

  it('given two successful charges for one order (the PSP-timeout incident), reports a double charge and the money', () => {
    const input = cleanRun();
    input.orders[0].ledger.charges.push(charge('ch_o1_retry', 50_000));
    input.orders[0].payments.push({ state: 'succeeded' });

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => `${v.kind}:${v.subject}`),
      ['double_charge:o1', 'double_charge:o1', 'money_mismatch:o1', 'money_mismatch:VND'],
    );
    assert.match(verdict.violations[0].message, /2 successful charges at the PSP \(ch_o1, ch_o1_retry\)/);
  });

  it('given money kept for a cancelled order, or a refunded order never refunded, reports money mismatches', () => {
    const input = cleanRun();
    input.orders.push(
      order('o6', 'CANCELLED', 50_000, { ledger: { charges: [charge('ch_o6', 50_000)], refunds: [] } }),
    );
    input.orders[4].ledger.refunds = [];

    const messages = checkConservation(input).violations.map((v) => v.message);

    assert.ok(messages.includes('order o5 (REFUNDED): charges - refunds = 50000 VND, expected 0'));
    assert.ok(messages.includes('order o6 (CANCELLED): charges - refunds = 50000 VND, expected 0'));
    assert.ok(messages.includes('VND: charges 250000 - refunds 0 = 250000, paid orders hold 150000'));
  });

  it('ignores declined charges, and flags a charge refunded twice', () => {
    const input = cleanRun();
    input.orders[3].ledger.charges = [charge('ch_declined', 50_000, 'failed')];
    input.orders[4].ledger.refunds.push(refund('re_o5_again', 'ch_o5', 0));

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => `${v.kind}:${v.subject}`),
      ['double_refund:o5'],
    );
  });

  it('reports a saga that has not ended as stuck with its last step, which is not by itself a violation', () => {
    const input = cleanRun();
    input.orders.push(
      order('o7', 'AWAITING_PAYMENT', 50_000, {
        order: {
          orderId: 'o7',
          status: 'AWAITING_PAYMENT',
          total: 50_000,
          currency: 'VND',
          paymentState: 'unknown',
          history: [
            { toStatus: 'PENDING', cause: 'checkout', at: '2026-12-02T12:00:00Z' },
            { toStatus: 'AWAITING_PAYMENT', cause: 'inventory.reserved', at: '2026-12-02T12:00:01Z' },
          ],
        },
      }),
    );

    const verdict = checkConservation(input);

    assert.equal(verdict.ok, true);
    assert.equal(verdict.clean, false);
    assert.deepEqual(verdict.stuck, [
      {
        orderId: 'o7',
        status: 'AWAITING_PAYMENT',
        paymentState: 'unknown',
        lastStep: 'AWAITING_PAYMENT after inventory.reserved',
        since: '2026-12-02T12:00:01Z',
      },
    ]);
    assert.match(
      formatVerdict(verdict),
      /stuck 1; first stuck o7 at AWAITING_PAYMENT after inventory\.reserved since 2026-12-02T12:00:01Z$/,
    );
  });

  it('reports an order the order service does not know, and the summary names the violations', () => {
    const input = cleanRun();
    input.orders.push({ orderId: 'ghost', order: null, payments: [], ledger: { charges: [], refunds: [] } });

    const verdict = checkConservation(input);

    assert.deepEqual(
      verdict.violations.map((v) => v.kind),
      ['missing_order'],
    );
    assert.match(
      formatVerdict(verdict),
      /^conservation VIOLATED: .*; 1 violations \(missing_order x1\): order service does not know order ghost$/,
    );
  });
});

describe('conservation checker, a SKU the run owns alone (exclusive)', () => {
  const exclusiveRun = (): ConservationInput => {
    const input = cleanRun();
    input.skus[0].exclusive = true;
    return input;
  };

  it('given every order ended, sold equals the units of the shipped orders and nothing is reserved: clean', () => {
    const verdict = checkConservation(exclusiveRun());

    assert.equal(verdict.clean, true, formatVerdict(verdict));
  });

  it('given inventory sold one unit more than the orders that kept it (a double commit), reports sold_mismatch', () => {
    const input = exclusiveRun();
    input.skus[0].stock = { sku: 'HEADPHONES', available: 1, reserved: 0, sold: 4 };

    const verdict = checkConservation(input);

    assert.deepEqual(verdict.violations, [
      {
        kind: 'sold_mismatch',
        subject: 'HEADPHONES',
        message: "HEADPHONES: inventory sold 4, the run's paid and shipped orders hold 3 units",
      },
    ]);
  });

  it('given units still reserved after every order ended, reports a reservation leak', () => {
    const input = exclusiveRun();
    input.skus[0].stock = { sku: 'HEADPHONES', available: 1, reserved: 1, sold: 3 };

    const kinds = checkConservation(input).violations.map((v) => `${v.kind}:${v.subject}`);

    assert.deepEqual(kinds, ['reservation_leak:HEADPHONES']);
  });

  it('given an order still awaiting payment, holds the sold and reserved checks and reports it stuck', () => {
    const input = exclusiveRun();
    input.skus[0].stock = { sku: 'HEADPHONES', available: 1, reserved: 1, sold: 3 };
    input.orders.push(order('o8', 'AWAITING_PAYMENT'));

    const verdict = checkConservation(input);

    assert.equal(verdict.ok, true);
    assert.deepEqual(
      verdict.stuck.map((s) => s.orderId),
      ['o8'],
    );
  });

  it('counts every unit of a line, none of an order still backordered, all of a filled backorder', () => {
    const twoUnits = exclusiveRun();
    twoUnits.orders[0].order!.lines = [{ sku: 'HEADPHONES', quantity: 2 }];
    const stillOwed = exclusiveRun();
    stillOwed.orders[1].order!.status = 'BACKORDERED';
    stillOwed.orders[1].order!.history = [{ to: 'PENDING' }, { to: 'BACKORDERED' }];
    const filled = exclusiveRun();
    filled.orders[1].order!.history = [
      { to: 'PENDING' },
      { to: 'BACKORDERED' },
      { to: 'PAID' },
      { to: 'SHIPPED' },
    ];

    const [a, b, c] = [twoUnits, stillOwed, filled].map((i) =>
      checkConservation(i).violations.map((v) => v.message),
    );

    assert.deepEqual(a, ["HEADPHONES: inventory sold 3, the run's paid and shipped orders hold 4 units"]);
    assert.deepEqual(b, ["HEADPHONES: inventory sold 3, the run's paid and shipped orders hold 2 units"]);
    assert.deepEqual(c, [], 'a restock filled the backorder: its unit is sold');
  });

  it('ignores lines of other SKUs', () => {
    const input = exclusiveRun();
    input.orders[0].order!.lines = [{ sku: 'OTHER', quantity: 1 }];

    const messages = checkConservation(input).violations.map((v) => v.message);

    assert.deepEqual(messages, [
      "HEADPHONES: inventory sold 3, the run's paid and shipped orders hold 2 units",
    ]);
  });
});

describe('fetchConservationInput over HTTP', () => {
  const orderId = '7d5ea7ca-2629-4a53-949b-bebc7a87882d';
  const paymentId = 'ecf60ddc-0629-4f71-a58f-c153fc24f51e';
  const answers: Record<string, unknown> = {
    '/v1/stock/HP': { sku: 'HP', available: 4, reserved: 0, sold: 1, reservationTtlSeconds: null },
    [`/v1/orders/${orderId}`]: {
      orderId,
      status: 'SHIPPED',
      customerId: 'c1',
      lines: [{ sku: 'HP', quantity: 1, unitPrice: 50_000, discount: 0, lineTotal: 50_000 }],
      total: 50_000,
      currency: 'VND',
      paymentState: 'succeeded',
      createdAt: '2026-12-02T16:31:50.856Z',
      updatedAt: '2026-12-02T16:31:56.307Z',
      history: [
        { from: null, to: 'PENDING', cause: 'checkout', eventId: null, at: '2026-12-02T16:31:50.856Z' },
      ],
    },
    [`/v1/payments?orderId=${orderId}`]: {
      orderId,
      payments: [
        {
          paymentId,
          state: 'succeeded',
          amount: 50_000,
          currency: 'VND',
          history: [{ from: 'pending', to: 'unknown', source: 'response', at: '2026-12-02T16:31:53.533Z' }],
        },
      ],
    },
    [`/v1/_ledger?reference=${orderId}`]: {
      charges: [{ id: 'ch_1', amount: 50_000, currency: 'VND', status: 'succeeded', token: 'tok_success' }],
      refunds: [],
      events: [],
      deliveries: [],
    },
  };
  let server: Server;
  let base: string;
  const seenKeys: string[] = [];
  /** Answers 503 this many times to the next requests, as a service being restarted does. */
  let unavailable = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seenKeys.push(req.headers.authorization ?? '');
      if (unavailable > 0) {
        unavailable -= 1;
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'UNAVAILABLE', message: 'restarting' }));
      }
      const body = answers[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body ?? { error: 'NOT_FOUND', message: 'no' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const target = () => ({ orderUrl: base, inventoryUrl: base, paymentUrl: base, pspUrl: base, apiKey: 'k1' });

  it('reads stock, order, payments and ledger with the tenant key, keeping what the checker needs', async () => {
    const input = await fetchConservationInput(target(), {
      skus: [{ sku: 'HP', initial: 5, exclusive: true }],
      orderIds: [orderId],
    });

    assert.deepEqual(input.skus, [
      { sku: 'HP', initial: 5, exclusive: true, stock: { sku: 'HP', available: 4, reserved: 0, sold: 1 } },
    ]);
    assert.equal(input.orders[0].order?.status, 'SHIPPED');
    assert.deepEqual(input.orders[0].order?.lines, [{ sku: 'HP', quantity: 1 }]);
    assert.deepEqual(input.orders[0].payments[0].history, [
      { from: 'pending', to: 'unknown', source: 'response' },
    ]);
    assert.deepEqual(input.orders[0].ledger, {
      charges: [{ id: 'ch_1', amount: 50_000, currency: 'VND', status: 'succeeded' }],
      refunds: [],
    });
    assert.ok(seenKeys.every((k) => k === 'Bearer k1'));
    assert.equal(checkConservation(input).clean, true);
  });

  it('asks again while a service answers 5xx, and gives up after unavailableMs', async () => {
    unavailable = 2;
    const input = await fetchConservationInput(target(), { skus: { HP: 5 }, orderIds: [] });
    assert.equal(input.skus[0].stock?.sold, 1);

    unavailable = 1_000;
    await assert.rejects(
      fetchConservationInput({ ...target(), unavailableMs: 300 }, { skus: { HP: 5 }, orderIds: [] }),
      /GET .*\/v1\/stock\/HP answered 503 for 300 ms/,
    );
    unavailable = 0;
  });

  it('reports an unknown SKU or order as missing (404), and refuses an answer off contract', async () => {
    const missing = await fetchConservationInput(target(), {
      skus: { NOPE: 1 },
      orderIds: ['00000000-0000-4000-8000-000000000000'],
    });
    assert.equal(missing.skus[0].stock, null);
    assert.equal(missing.orders[0].order, null);

    answers['/v1/stock/BAD'] = { sku: 'BAD', available: '3', reserved: 0, sold: 0 };
    await assert.rejects(
      fetchConservationInput(target(), { skus: { BAD: 3 }, orderIds: [] }),
      /GET .*\/v1\/stock\/BAD: answer off contract: .*available/s,
    );
  });
});
