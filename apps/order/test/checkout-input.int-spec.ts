import { beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  ACME,
  GLOBEX,
  call,
  checkout,
  checkoutBody,
  priceSku,
  uniqueSku,
  suiteDataSource,
} from './order-api';

describe('checkout input, prices and tenancy (order service over HTTP)', () => {
  const db = suiteDataSource('order_svc', 3);
  const sku = uniqueSku('IN');

  beforeAll(async () => {
    await priceSku(sku);
  });

  /** Nothing for this customer or key reached the order database. */
  const nothingWritten = async (customerId: string, key: string | null) => {
    // position(): the cases with a forged customer id carry it inside their own.
    const [o] = await db.query(`SELECT count(*) AS n FROM orders WHERE position($1 in customer_id) > 0`, [
      customerId,
    ]);
    assert.equal(Number(o.n), 0, 'no order');
    if (key)
      assert.equal(
        (await db.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key])).length,
        0,
        'no idempotency key',
      );
  };

  it('given the price changed since the cart, answers 409 PRICE_CHANGED with the current price and creates nothing', async () => {
    const s = uniqueSku('PC');
    await priceSku(s, 45_000);
    await priceSku(s, 50_000);
    const key = randomUUID();
    const body = { ...checkoutBody(s), lines: [{ sku: s, quantity: 1, unitPrice: 45_000 }] };
    const r = await checkout(body, key);
    assert.equal(r.status, 409);
    assert.equal(r.json.error, 'PRICE_CHANGED');
    assert.deepEqual(r.json.currentPrices, [{ sku: s, unitPrice: 50_000, currency: 'VND' }]);
    assert.deepEqual(r.json.changed, [{ sku: s, quoted: 45_000, unitPrice: 50_000 }]);
    await nothingWritten(body.customerId, key);
    const confirmed = await checkout({ ...body, lines: [{ sku: s, quantity: 1, unitPrice: 50_000 }] }, key);
    assert.equal(confirmed.status, 202, 'the same key may be used again once the shopper confirmed');
  });

  it('refuses a price above the bound with 422 PRICE_OUT_OF_RANGE and keeps the old price', async () => {
    const s = uniqueSku('BIG');
    await priceSku(s, 45_000);
    // Just above the bound, and 2^53 - 1 (the largest integer JSON can carry exactly): both 422, neither stored.
    for (const unitPrice of [1_000_000_000_001, Number.MAX_SAFE_INTEGER]) {
      const r = await call('PUT', `/v1/admin/prices/${s}`, { body: { unitPrice, currency: 'VND' } });
      assert.equal(r.status, 422, r.text);
      assert.equal(r.json.error, 'PRICE_OUT_OF_RANGE');
      assert.equal(r.json.maxUnitPrice, 1_000_000_000_000);
    }
    const [row] = await db.query(`SELECT unit_price FROM prices WHERE tenant_id = 'acme' AND sku = $1`, [s]);
    assert.equal(Number(row.unit_price), 45_000);
    // The bound itself is a price; an order of 1,001 units at it is one unit above the order total's bound:
    // 422 ORDER_TOTAL_TOO_LARGE (exact integer arithmetic, never a float overflow and a 500), and no order.
    const t = uniqueSku('BIG');
    for (const one of [s, t]) await priceSku(one, 1_000_000_000_000);
    const body = {
      ...checkoutBody(s),
      lines: [
        { sku: s, quantity: 1000, unitPrice: 1_000_000_000_000 },
        { sku: t, quantity: 1, unitPrice: 1_000_000_000_000 },
      ],
    };
    const key = randomUUID();
    const tooLarge = await checkout(body, key);
    assert.equal(tooLarge.status, 422, tooLarge.text);
    assert.equal(tooLarge.json.error, 'ORDER_TOTAL_TOO_LARGE');
    assert.equal(tooLarge.json.maxTotal, 1_000_000_000_000_000);
    await nothingWritten(body.customerId, key);
  });

  it('snapshots the server price into the order lines even when the shopper sent none', async () => {
    const body = { ...checkoutBody(sku), lines: [{ sku, quantity: 3 }] };
    const r = await checkout(body);
    assert.equal(r.status, 202);
    const order = await call('GET', `/v1/orders/${r.json.orderId}`);
    assert.equal(order.status, 200);
    assert.deepEqual(order.json.lines, [
      { sku, quantity: 3, unitPrice: 50_000, discount: 0, lineTotal: 150_000 },
    ]);
    assert.equal(order.json.total, 150_000);
    assert.equal(order.json.currency, 'VND');
    assert.ok(Array.isArray(order.json.history));
    assert.equal(
      (await call('GET', `/v1/orders/${r.json.orderId}`, { key: GLOBEX })).status,
      404,
      "another tenant's order is 404",
    );
    assert.equal((await call('POST', `/v1/orders/${r.json.orderId}/cancel`, { key: GLOBEX })).status, 404);
  });

  const line = (over: Record<string, unknown>) => [{ sku, quantity: 1, unitPrice: 50_000, ...over }];
  const cases: {
    name: string;
    status: number;
    error: string;
    key?: string | null;
    idem?: string | null;
    body: (c: string) => unknown;
  }[] = [
    {
      name: 'missing Idempotency-Key',
      status: 400,
      error: 'VALIDATION_FAILED',
      idem: null,
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
    {
      name: 'Idempotency-Key over 255 chars',
      status: 400,
      error: 'VALIDATION_FAILED',
      idem: 'k'.repeat(256),
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
    {
      name: 'Idempotency-Key with a space',
      status: 400,
      error: 'VALIDATION_FAILED',
      idem: 'a b',
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
    {
      name: 'unknown SKU',
      status: 404,
      error: 'UNKNOWN_SKU',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: line({ sku: uniqueSku('NOPE') }) }),
    },
    {
      name: 'zero quantity',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: line({ quantity: 0 }) }),
    },
    {
      name: 'negative quantity',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: line({ quantity: -1 }) }),
    },
    {
      name: 'huge quantity',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: line({ quantity: 1_000_001 }) }),
    },
    {
      name: 'fractional quantity',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: line({ quantity: 1.5 }) }),
    },
    {
      name: '101 lines',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({
        ...checkoutBody(sku),
        customerId: c,
        lines: Array.from({ length: 101 }, (_, i) => ({ sku: `${sku}-${i}`, quantity: 1 })),
      }),
    },
    {
      name: 'no lines',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: [] }),
    },
    {
      name: 'the same SKU on two lines',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, lines: [...line({}), ...line({})] }),
    },
    {
      name: 'wrong currency',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, currency: 'USD' }),
    },
    {
      name: 'invalid currency',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, currency: 'dong' }),
    },
    {
      name: 'missing payment token',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, payment: {} }),
    },
    // Free-text ids are stored, logged and exported as given: no control or invisible characters in them.
    ...(
      [
        [
          'a newline in the customer id (a forged log line)',
          (c: string) => `${c}\n{"level":30,"msg":"refund ok"}`,
        ],
        ['a NUL in the customer id', (c: string) => `${c}\u0000`],
        ['a right-to-left override in the customer id', (c: string) => `${c}\u202egpj.exe`],
        ['a zero-width space in the customer id', (c: string) => `${c}\u200b`],
        ['a leading space in the customer id', (c: string) => ` ${c}`],
      ] as const
    ).map(([name, customerId]) => ({
      name,
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c: string) => ({ ...checkoutBody(sku), customerId: customerId(c) }),
    })),
    {
      name: 'an escape sequence in the payment token',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, payment: { token: 'tok_success\u001b[2J' } }),
    },
    {
      name: 'a carriage return in the voucher code',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, voucherCode: 'SAVE10\r\n' }),
    },
    {
      name: 'unknown voucher',
      status: 404,
      error: 'UNKNOWN_VOUCHER',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, voucherCode: 'NOPE-NOPE' }),
    },
    {
      name: 'malformed JSON',
      status: 400,
      error: 'VALIDATION_FAILED',
      body: (c) => `{"customerId":"${c}", "lines": [`,
    },
    {
      name: 'oversized body',
      status: 413,
      error: 'PAYLOAD_TOO_LARGE',
      body: (c) => ({ ...checkoutBody(sku), customerId: c, pad: 'x'.repeat(200_000) }),
    },
    {
      name: 'missing API key',
      status: 401,
      error: 'UNAUTHENTICATED',
      key: null,
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
    {
      name: 'unknown API key',
      status: 401,
      error: 'UNAUTHENTICATED',
      key: 'not-a-key',
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
    // The SKU is priced for acme only: globex's key sees no such SKU.
    {
      name: "another tenant's API key",
      status: 404,
      error: 'UNKNOWN_SKU',
      key: GLOBEX,
      body: (c) => ({ ...checkoutBody(sku), customerId: c }),
    },
  ];

  for (const c of cases) {
    it(`answers ${c.status} ${c.error} for ${c.name} and writes nothing`, async () => {
      const customerId = `bad-${randomUUID()}`;
      const idem = c.idem === undefined ? randomUUID() : c.idem;
      const r = await checkout(c.body(customerId), idem, c.key === undefined ? ACME : c.key);
      assert.equal(r.status, c.status, r.text);
      assert.equal(r.json.error, c.error, r.text);
      assert.equal(typeof r.json.message, 'string');
      await nothingWritten(customerId, idem);
    });
  }

  it('validates the admin API too', async () => {
    assert.equal(
      (await call('PUT', `/v1/admin/prices/${sku}`, { body: { unitPrice: -1, currency: 'VND' } })).status,
      400,
    );
    assert.equal(
      (await call('PUT', `/v1/admin/prices/${sku}`, { body: { unitPrice: 1.5, currency: 'VND' } })).status,
      400,
    );
    assert.equal(
      (await call('PUT', `/v1/admin/prices/${sku}`, { key: null, body: { unitPrice: 1, currency: 'VND' } }))
        .status,
      401,
    );
    assert.equal(
      (await call('POST', '/v1/admin/vouchers', { body: { code: 'X', percentOff: 0, maxRedemptions: 1 } }))
        .status,
      400,
    );
    assert.equal(
      (await call('PUT', `/v1/admin/flash-sales/${sku}`, { body: { enabled: 'yes' } })).status,
      400,
    );
    assert.equal((await call('GET', '/v1/orders/not-a-uuid')).status, 404);
    assert.equal((await call('GET', `/v1/orders/${randomUUID()}`)).status, 404);
  });
});
