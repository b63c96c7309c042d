import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { HandlerMap, Logger, NonRetryableError, OutboxWriter } from '@checkout/messaging';
import { CatalogRepository } from '../../catalog/database/catalog.repository';
import { Moved, OrderRepository } from '../database/order.repository';
import { OrderStatus } from '../domain/order-status';

/** The gate operations the saga needs (OrderStockGate in the service, a fake in tests). */
export interface SagaGate {
  giveBack(tenantId: string, holdId: string | null, why: string): Promise<void>;
  settle(tenantId: string, holdId: string | null): Promise<void>;
}

/** What the saga reactions use. */
export interface SagaDeps {
  orders: OrderRepository;
  catalog: CatalogRepository;
  outbox: OutboxWriter;
  gate: SagaGate;
  /** The tenants this deployment serves (an event of another tenant is parked on the DLQ). */
  tenants: { get(id: string): unknown };
  logger: Logger;
}

/**
 * The order's reactions to the other services' events. Each one is: parse (done by the runtime) -> inbox
 * (done by the runtime, same transaction) -> conditional updates here. A duplicate or late event finds the
 * order elsewhere and changes nothing, so nothing ever moves backwards.
 */
export function orderSagaHandlers(d: SagaDeps): HandlerMap {
  const move = async (
    tx: EntityManager,
    e: SagaEvent,
    to: Exclude<OrderStatus, 'PENDING'>,
  ): Promise<Moved | null> => {
    const moved = await d.orders.transition(tx, e.tenantId, e.sagaId, to, e.type, e.eventId);
    if (!moved)
      d.logger.info(
        { orderId: e.sagaId, type: e.type, to },
        'event did not move the order (duplicate, late or foreign)',
      );
    return moved;
  };

  /** Compensations of checkout when the order ends REJECTED or CANCELLED: voucher back, gate units back. */
  const undoCheckout = async (tx: EntityManager, e: SagaEvent, moved: Moved) => {
    await d.catalog.returnVoucher(tx, e.tenantId, e.sagaId);
    await d.gate.giveBack(e.tenantId, moved.gateHoldId, e.type);
  };

  /** PAID needs both the money (payment.succeeded) and the stock (inventory.committed), in either order. */
  const paidIfComplete = async (tx: EntityManager, e: SagaEvent) => {
    const moved = await d.orders.transition(tx, e.tenantId, e.sagaId, 'PAID', e.type, e.eventId);
    if (!moved) return;
    const order = (await d.orders.find(tx, e.tenantId, e.sagaId))!;
    await d.outbox.append(tx, {
      type: 'order.paid',
      tenantId: e.tenantId,
      sagaId: e.sagaId,
      cause: e,
      payload: {
        orderId: order.id,
        tenantId: order.tenantId,
        customerId: order.customerId,
        currency: order.currency,
        lines: order.lines,
        subtotal: order.subtotal,
        discount: order.discount,
        total: order.total,
        voucherCode: order.voucherCode,
        paymentId: order.paymentId!,
        pspReference: order.pspReference,
        paidAt: order.paidAt!,
      },
    });
    await d.gate.settle(e.tenantId, moved.gateHoldId);
  };

  return {
    'inventory.reserved': async (e, tx) => {
      await move(tx, e, 'AWAITING_PAYMENT');
    },
    'inventory.rejected': async (e, tx) => {
      const moved = await move(tx, e, 'REJECTED');
      if (moved) await undoCheckout(tx, e, moved);
    },
    'inventory.released': async (e, tx) => {
      // The reservation expired or was released: the gate gets its units back (once per hold).
      const order = await d.orders.find(tx, e.tenantId, e.sagaId);
      if (order) await d.gate.giveBack(e.tenantId, order.gateHoldId, `${e.type}:${e.payload.reason}`);
    },
    'inventory.committed': async (e, tx) => {
      await d.orders.markStockCommitted(tx, e.tenantId, e.sagaId);
      await paidIfComplete(tx, e);
    },
    'inventory.backordered': async (e, tx) => {
      const moved = await move(tx, e, 'BACKORDERED');
      if (moved) await d.gate.settle(e.tenantId, moved.gateHoldId);
    },
    'payment.succeeded': async (e, tx) => {
      await d.orders.movePayment(tx, e.tenantId, e.sagaId, 'succeeded', {
        paymentId: e.payload.paymentId,
        pspReference: e.payload.pspReference,
        paidAt: e.payload.succeededAt,
      });
      await paidIfComplete(tx, e);
    },
    'payment.failed': async (e, tx) => {
      await d.orders.movePayment(tx, e.tenantId, e.sagaId, 'failed', { paymentId: e.payload.paymentId });
      const moved = await move(tx, e, 'CANCELLED');
      if (!moved) return;
      await d.outbox.append(tx, {
        type: 'order.cancelled',
        tenantId: e.tenantId,
        sagaId: e.sagaId,
        cause: e,
        payload: { orderId: e.sagaId, reason: 'payment_failed', refundIfCharged: false },
      });
      await undoCheckout(tx, e, moved);
    },
    'payment.refunded': async (e, tx) => {
      await d.orders.movePayment(tx, e.tenantId, e.sagaId, 'refunded', { paymentId: e.payload.paymentId });
      await move(tx, e, 'REFUNDED');
    },
    'fulfillment.shipment-created': async (e, tx) => {
      await move(tx, e, 'SHIPPED');
    },
    'fulfillment.apology-voucher-issued': async (e, tx) => {
      // The apology email carrying this code is already queued: make the code redeemable, once, by the
      // order's customer (our own record of it wins; fulfillment's when we do not know the order).
      if (!d.tenants.get(e.tenantId))
        throw new NonRetryableError('ORDER.UNKNOWN_TENANT', `unknown tenant ${e.tenantId}`);
      const order = await d.orders.find(tx, e.tenantId, e.payload.orderId);
      const outcome = await d.catalog.issueApologyVoucher(tx, e.tenantId, {
        code: e.payload.code,
        percentOff: e.payload.percentOff,
        maxRedemptions: e.payload.maxRedemptions,
        customerId: order?.customerId ?? e.payload.customerId,
        forOrderId: e.payload.orderId,
      });
      if (outcome === 'code-taken')
        throw new NonRetryableError(
          'ORDER.VOUCHER_CODE_TAKEN',
          `apology voucher ${e.payload.code} of order ${e.payload.orderId}: another voucher has that code`,
        );
      d.logger.info(
        { orderId: e.payload.orderId, outcome, knownOrder: order !== undefined },
        'apology voucher issued',
      );
    },
  };
}
