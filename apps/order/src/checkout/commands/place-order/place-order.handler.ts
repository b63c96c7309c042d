import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { TakeResult } from '@checkout/stock-gate';
import { QuoteCheckoutHandler } from '../../../catalog/commands/quote-checkout/quote-checkout.handler';
import { RedeemVoucherHandler } from '../../../catalog/commands/redeem-voucher/redeem-voucher.handler';
import { OpenOrderHandler } from '../../../orders/commands/open-order/open-order.handler';
import { OrderStockGate } from '../../../gate/stock-gate.provider';
import { CheckoutMetrics, CheckoutOutcome } from '../../checkout.metrics';
import { IdempotencyRepository } from '../../database/idempotency.repository';
import {
  CheckoutError,
  GateTimeout,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  OutOfStock,
  UnknownVoucher,
  VoucherExhausted,
} from '../../domain/checkout.errors';
import { RequestedLine, priceLines } from '../../domain/pricing';
import { gateHoldId, requestHash } from '../../domain/request-hash';

/** A checkout request after validation. */
export interface PlaceOrderCommand {
  tenantId: string;
  idempotencyKey: string;
  body: {
    customerId: string;
    currency: string;
    lines: RequestedLine[];
    voucherCode?: string;
    payment: { token: string };
  };
}

/** The HTTP answer, as bytes to send (and to replay for a retry with the same key). */
export interface CheckoutReply {
  status: number;
  body: string;
  replayed: boolean;
}

/**
 * PlaceOrder: gate (or replay), key, prices, voucher, then the order and `order.created` in one transaction, and the
 * answer marked at the gate; each failure undoes the steps before it (docs/design/order-checkout.md).
 */
@Injectable()
export class PlaceOrderHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: IdempotencyRepository,
    private readonly quote: QuoteCheckoutHandler,
    private readonly redeemVoucher: RedeemVoucherHandler,
    private readonly openOrder: OpenOrderHandler,
    private readonly gate: OrderStockGate,
    private readonly metrics: CheckoutMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('PlaceOrder');
  }

  async execute(cmd: PlaceOrderCommand): Promise<CheckoutReply> {
    try {
      const reply = await this.run(cmd);
      this.count(reply.replayed ? 'replayed' : 'accepted');
      return reply;
    } catch (error) {
      this.count(error instanceof CheckoutError ? (error.code as CheckoutOutcome) : 'error');
      throw error;
    }
  }

  /** Counts an answer given before the command ran (the request failed validation). */
  count(outcome: CheckoutOutcome): void {
    this.metrics.count(outcome);
  }

  private async run({ tenantId, idempotencyKey, body }: PlaceOrderCommand): Promise<CheckoutReply> {
    // Hashed only when needed: a refusal by the gate (most of a flash sale's answers) never hashes the body.
    let hash: string | undefined;
    const hashOf = () => (hash ??= requestHash(body));
    const holdId = gateHoldId(idempotencyKey);
    const take = await this.takeUnlessAnswered(tenantId, idempotencyKey, holdId, body.lines, hashOf);
    if ('replayed' in take) return take;
    if (take.outcome === 'Insufficient') throw new OutOfStock(take.sku, take.remaining);
    if (take.outcome === 'GateUnknown')
      return this.afterUnknownTake(tenantId, idempotencyKey, hashOf(), take.reason);
    // Redis is down (the take surely did not run): the database path decides, inventory never oversells.
    if (take.outcome === 'GateUnavailable') this.gate.reportUnavailable('take', take, { tenantId });
    // Only a fresh take is this request's to give back; AlreadyHeld belongs to the first request with this key.
    const tookNow = take.outcome === 'Granted';
    const orderHold = take.outcome === 'Granted' || take.outcome === 'AlreadyHeld' ? holdId : null;
    let created = false;
    try {
      const claim = await this.keys.claim(this.dataSource, tenantId, idempotencyKey, hashOf());
      if (claim.kind === 'replay') return { status: claim.status, body: claim.body, replayed: true };
      if (claim.kind === 'in-use') throw new IdempotencyKeyInUse();
      if (claim.kind === 'reused') throw new IdempotencyKeyReused();
      try {
        const reply = await this.createOrder(tenantId, idempotencyKey, claim.leaseToken, body, orderHold);
        created = true;
        // Only a checkout that met the gate (or found Redis away) is marked: the marks stay as few as the units
        // flash sales sell. A SKU's earlier answers are marked when its gate is turned on (SetFlashSale).
        if (take.outcome !== 'NotGated') await this.gate.markAnswered(tenantId, idempotencyKey);
        return reply;
      } finally {
        if (!created) await this.keys.release(this.dataSource, tenantId, idempotencyKey, claim.leaseToken);
      }
    } finally {
      if (tookNow && !created) await this.gate.giveBack(tenantId, holdId, 'checkout did not create an order');
    }
  }

  /**
   * The gate's take, asked first so that a refusal never reaches the database. A retry of a checkout that has
   * its answer is known to the gate (`markAnswered`): it takes nothing and is replayed from the database, so it
   * neither takes a unit (another buyer's false OUT_OF_STOCK) nor reads OUT_OF_STOCK once the sale is sold out.
   */
  private async takeUnlessAnswered(
    tenantId: string,
    idempotencyKey: string,
    holdId: string,
    lines: RequestedLine[],
    hashOf: () => string,
  ): Promise<Exclude<TakeResult, { outcome: 'Answered' }> | CheckoutReply> {
    const take = await this.gate.gate.take(tenantId, holdId, lines);
    if (take.outcome !== 'Answered') return take;
    const earlier = await this.keys.peek(this.dataSource, tenantId, idempotencyKey, hashOf);
    if (earlier?.kind === 'replay') return { status: earlier.status, body: earlier.body, replayed: true };
    if (earlier?.kind === 'reused') throw new IdempotencyKeyReused();
    // The answer is gone (the key expired before its mark): a new request under an old key takes as any other.
    const again = await this.gate.gate.take(tenantId, holdId, lines, { ignoreAnswered: true });
    if (again.outcome === 'Answered') throw new Error('stock gate answered a take that ignores answers');
    return again;
  }

  /**
   * A take without a reply: undo it under the key's lease and fail closed with a retryable 503
   * (docs/design/order-checkout.md).
   */
  private async afterUnknownTake(
    tenantId: string,
    idempotencyKey: string,
    hash: string,
    reason: string,
  ): Promise<CheckoutReply> {
    const claim = await this.keys.claim(this.dataSource, tenantId, idempotencyKey, hash);
    if (claim.kind === 'replay') return { status: claim.status, body: claim.body, replayed: true };
    if (claim.kind === 'in-use') throw new IdempotencyKeyInUse();
    if (claim.kind === 'reused') throw new IdempotencyKeyReused();
    try {
      await this.gate.settleUnknownTake(tenantId, gateHoldId(idempotencyKey), reason);
    } finally {
      await this.keys.release(this.dataSource, tenantId, idempotencyKey, claim.leaseToken);
    }
    throw new GateTimeout(1);
  }

  private async createOrder(
    tenantId: string,
    idempotencyKey: string,
    leaseToken: string,
    body: PlaceOrderCommand['body'],
    gateHold: string | null,
  ): Promise<CheckoutReply> {
    const { prices, voucher } = await this.quote.execute(
      tenantId,
      body.customerId,
      body.lines.map((l) => l.sku),
      body.voucherCode,
    );
    // A voucher bound to another customer (an apology voucher) answers as if it did not exist: a code is a
    // secret, and telling a stranger it is valid would help guessing.
    if (body.voucherCode && !voucher) throw new UnknownVoucher(body.voucherCode);
    const priced = priceLines(body.currency, body.lines, prices, voucher?.percentOff ?? 0);
    const orderId = randomUUID();
    const reply = { status: 202, body: JSON.stringify({ orderId, status: 'PENDING' }), replayed: false };
    await this.dataSource.transaction(async (tx) => {
      await this.openOrder.execute(tx, {
        id: orderId,
        tenantId,
        customerId: body.customerId,
        currency: body.currency,
        ...priced,
        voucherCode: voucher?.code ?? null,
        paymentToken: body.payment.token,
        gateHoldId: gateHold,
        idempotencyKey,
      });
      if (
        !(await this.keys.complete(
          tx,
          tenantId,
          idempotencyKey,
          leaseToken,
          orderId,
          reply.status,
          reply.body,
        ))
      ) {
        this.logger.warn({ tenantId, orderId }, 'idempotency lease lost before commit: order rolled back');
        throw new IdempotencyKeyInUse();
      }
      // Last, in one statement: the hot voucher row stays locked from here to COMMIT only (one round trip).
      // Every checkout of a popular voucher queues on that row, so its lock time is the checkout throughput.
      if (voucher && !(await this.redeemVoucher.execute(tx, tenantId, voucher.code, orderId))) {
        throw new VoucherExhausted(voucher.code);
      }
    });
    return reply;
  }
}
