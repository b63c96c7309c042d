import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { TakeOptions, TakeResult } from '@checkout/stock-gate';
import { OutboxWriter } from '@checkout/messaging';
import { scratchDatabase } from '@checkout/testing';
import { CatalogRepository } from '../src/catalog/database/catalog.repository';
import { QuoteCheckoutHandler } from '../src/catalog/commands/quote-checkout/quote-checkout.handler';
import { RedeemVoucherHandler } from '../src/catalog/commands/redeem-voucher/redeem-voucher.handler';
import { OpenOrderHandler } from '../src/orders/commands/open-order/open-order.handler';
import {
  PlaceOrderCommand,
  PlaceOrderHandler,
} from '../src/checkout/commands/place-order/place-order.handler';
import { CheckoutMetrics } from '../src/checkout/checkout.metrics';
import { IdempotencyRepository } from '../src/checkout/database/idempotency.repository';
import { GateTimeout, IdempotencyKeyReused, OutOfStock } from '../src/checkout/domain/checkout.errors';
import { gateHoldId } from '../src/checkout/domain/request-hash';
import { OrderStockGate } from '../src/gate/stock-gate.provider';
import { MIGRATIONS } from '../src/migrations';
import { OrderRepository } from '../src/orders/database/order.repository';

const tenantId = 'acme';
const quiet = {
  setContext: () => undefined,
  info: () => undefined,
  warn: () => undefined,
} as unknown as PinoLogger;

/** A gate whose take answers what the test says (`then` first, once each), recording what the checkout did with it. */
class ScriptedGate {
  next: TakeResult = { outcome: 'NotGated' };
  then: TakeResult[] = [];
  readonly calls: string[] = [];
  readonly gate = {
    take: async (_t: string, _holdId: string, _lines: unknown, options?: TakeOptions) => {
      if (options?.ignoreAnswered) this.calls.push('take:ignoring-answered');
      return this.then.shift() ?? this.next;
    },
  };
  async markAnswered(_t: string, idempotencyKey: string) {
    this.calls.push(`marked:${idempotencyKey}`);
  }
  reportUnavailable(operation: string) {
    this.calls.push(`unavailable:${operation}`);
  }
  async giveBack(_t: string, holdId: string | null) {
    this.calls.push(`giveBack:${holdId}`);
  }
  async settleUnknownTake(_t: string, holdId: string) {
    this.calls.push(`settleUnknown:${holdId}`);
    return 'returned' as const;
  }
}

describe("checkout and the gate's answers (PlaceOrder on a scratch order database)", () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: DataSource;
  let gate: ScriptedGate;
  let registry: Registry;
  let handler: PlaceOrderHandler;

  beforeAll(async () => {
    scratch = await scratchDatabase('order_gate', MIGRATIONS, 5);
    db = scratch.dataSource;
    await new CatalogRepository().putPrice(db, tenantId, 'HOT-1', 50_000, 'VND');
    gate = new ScriptedGate();
    registry = new Registry();
    handler = new PlaceOrderHandler(
      db,
      new IdempotencyRepository(30_000, 24),
      new QuoteCheckoutHandler(db, new CatalogRepository()),
      new RedeemVoucherHandler(new CatalogRepository()),
      new OpenOrderHandler(new OutboxWriter('order'), new OrderRepository()),
      gate as unknown as OrderStockGate,
      new CheckoutMetrics(registry),
      quiet,
    );
  });
  afterAll(async () => {
    await scratch.drop();
  });

  const command = (key = randomUUID()): PlaceOrderCommand => ({
    tenantId,
    idempotencyKey: key,
    body: {
      customerId: `c-${randomUUID()}`,
      currency: 'VND',
      lines: [{ sku: 'HOT-1', quantity: 1 }],
      payment: { token: 'tok_success' },
    },
  });
  const count = async (table: string, where: string, value: string) =>
    Number((await db.query(`SELECT count(*) AS n FROM ${table} WHERE ${where} = $1`, [value]))[0].n);
  const outcome = async (label: string) =>
    (await registry.getSingleMetric('order_checkouts_total')!.get()).values.find(
      (v) => v.labels.outcome === label,
    )?.value ?? 0;

  it('given a take without a reply: 503 GATE_TIMEOUT, the hold settled under the key, nothing written', async () => {
    gate.next = { outcome: 'GateUnknown', reason: 'Command timed out' };
    const cmd = command();
    const before = await outcome('GATE_TIMEOUT');
    await assert.rejects(
      handler.execute(cmd),
      (e: unknown) => e instanceof GateTimeout && e.status === 503 && e.details.retryable === true,
    );
    assert.ok(gate.calls.includes(`settleUnknown:${gateHoldId(cmd.idempotencyKey)}`));
    assert.equal(
      await count('orders', 'customer_id', cmd.body.customerId),
      0,
      'no order on the database path',
    );
    assert.equal(
      await count('idempotency_keys', 'key', cmd.idempotencyKey),
      0,
      'the key is free for the retry',
    );
    assert.equal(await outcome('GATE_TIMEOUT'), before + 1);

    gate.next = { outcome: 'Granted', gatedSkus: ['HOT-1'] };
    const retry = await handler.execute(cmd);
    assert.equal(retry.status, 202, 'the retry with the same key goes through');
  });

  it('given a take without a reply for a key that already has its answer: the answer is replayed, its hold kept', async () => {
    const cmd = command();
    gate.next = { outcome: 'Granted', gatedSkus: ['HOT-1'] };
    const first = await handler.execute(cmd);
    gate.calls.length = 0;
    gate.next = { outcome: 'GateUnknown', reason: 'Command timed out' };
    const replay = await handler.execute(cmd);
    assert.deepEqual(replay, { ...first, replayed: true });
    assert.deepEqual(gate.calls, [], "the first request's hold is not given back");
  });

  it('given Redis down (the take surely did not run): the database path decides, and it is counted', async () => {
    gate.calls.length = 0;
    gate.next = { outcome: 'GateUnavailable', reason: 'redis connection is reconnecting' };
    const cmd = command();
    const r = await handler.execute(cmd);
    assert.equal(r.status, 202);
    assert.deepEqual(gate.calls, ['unavailable:take', `marked:${cmd.idempotencyKey}`]);
    assert.equal(await count('orders', 'customer_id', cmd.body.customerId), 1);
  });

  it('given SKUs without a gate: the answer is not marked at the gate (the marks stay as few as gated sales)', async () => {
    gate.calls.length = 0;
    gate.next = { outcome: 'NotGated' };
    assert.equal((await handler.execute(command())).status, 202);
    assert.deepEqual(gate.calls, []);
  });

  it('given a key the gate knows as answered: the stored answer is replayed, nothing taken or given back', async () => {
    const cmd = command();
    gate.next = { outcome: 'Granted', gatedSkus: ['HOT-1'] };
    gate.calls.length = 0;
    const first = await handler.execute(cmd);
    assert.deepEqual(gate.calls, [`marked:${cmd.idempotencyKey}`], 'the answer is marked at the gate');
    gate.calls.length = 0;
    gate.next = { outcome: 'Answered' };
    assert.deepEqual(await handler.execute(cmd), { ...first, replayed: true });
    await assert.rejects(
      handler.execute({ ...cmd, body: { ...cmd.body, customerId: 'someone-else' } }),
      (e: unknown) => e instanceof IdempotencyKeyReused,
    );
    assert.deepEqual(gate.calls, []);
  });

  it('given a key the gate knows as answered but whose answer is gone: it takes again, ignoring the mark', async () => {
    const cmd = command();
    gate.calls.length = 0;
    gate.then = [{ outcome: 'Answered' }];
    gate.next = { outcome: 'Insufficient', sku: 'HOT-1', remaining: 0 };
    await assert.rejects(handler.execute(cmd), (e: unknown) => e instanceof OutOfStock);
    assert.deepEqual(gate.calls, ['take:ignoring-answered']);
    gate.calls.length = 0;
    gate.then = [{ outcome: 'Answered' }];
    gate.next = { outcome: 'Granted', gatedSkus: ['HOT-1'] };
    assert.equal((await handler.execute(cmd)).status, 202);
    assert.deepEqual(gate.calls, ['take:ignoring-answered', `marked:${cmd.idempotencyKey}`]);
    assert.equal(await count('orders', 'customer_id', cmd.body.customerId), 1);
  });
});
