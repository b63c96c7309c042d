import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { ReturnVoucherHandler } from '../../../catalog/commands/return-voucher/return-voucher.handler';
import { OrderStockGate } from '../../../gate/stock-gate.provider';
import { OrderRepository } from '../../database/order.repository';
import { OrderNotCancellable, OrderNotFound } from '../../domain/order.errors';
import { refundIfCharged } from '../../domain/order-status';

/**
 * CancelOrder (customer request): only before the payment succeeded. The status change, the voucher's
 * return and `order.cancelled` commit together; payment refunds a charge that may exist (refundIfCharged),
 * inventory releases the stock. Cancelling a cancelled order again is a no-op answered the same way.
 */
@Injectable()
export class CancelOrderHandler {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    private readonly orders: OrderRepository,
    private readonly returnVoucher: ReturnVoucherHandler,
    private readonly gate: OrderStockGate,
  ) {}

  async execute(tenantId: string, orderId: string): Promise<{ orderId: string; status: 'CANCELLED' }> {
    const moved = await this.dataSource.transaction(async (tx) => {
      const m = await this.orders.cancelByCustomer(tx, tenantId, orderId);
      if (!m) return null;
      await this.returnVoucher.execute(tx, tenantId, orderId);
      await this.outbox.append(tx, {
        type: 'order.cancelled',
        tenantId,
        sagaId: orderId,
        payload: { orderId, reason: 'customer_request', refundIfCharged: refundIfCharged(m.paymentState) },
      });
      return m;
    });
    if (moved) {
      await this.gate.giveBack(tenantId, moved.gateHoldId, 'customer_request');
      return { orderId, status: 'CANCELLED' };
    }
    const order = await this.orders.find(this.dataSource, tenantId, orderId);
    if (!order) throw new OrderNotFound(orderId);
    if (order.status === 'CANCELLED') return { orderId, status: 'CANCELLED' };
    throw new OrderNotCancellable(orderId, order.status, order.paymentState);
  }
}
