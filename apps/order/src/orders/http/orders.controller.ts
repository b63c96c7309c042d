import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CancelAccepted, OrderId, OrderView } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard } from '@checkout/service-kit';
import { CancelOrderHandler } from '../commands/cancel-order/cancel-order.handler';
import { OrderRepository } from '../database/order.repository';
import { OrderNotFound } from '../domain/order.errors';

/** The shopper's view of an order, and the customer's cancel. Tenant-scoped: another tenant's order is 404. */
@Controller('v1/orders')
@UseGuards(TenantGuard)
export class OrdersController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly orders: OrderRepository,
    private readonly cancelOrder: CancelOrderHandler,
  ) {}

  /** Status, payment state, snapshotted lines and the status history of an order. */
  @Get(':orderId')
  async get(@CurrentTenant() tenant: Tenant, @Param('orderId') orderId: string): Promise<OrderView> {
    if (!OrderId.safeParse(orderId).success) throw new OrderNotFound(orderId);
    const order = await this.orders.find(this.dataSource, tenant.id, orderId);
    if (!order) throw new OrderNotFound(orderId);
    const history = await this.orders.history(this.dataSource, tenant.id, orderId);
    return {
      orderId: order.id,
      status: order.status,
      customerId: order.customerId,
      lines: order.lines,
      subtotal: order.subtotal,
      discount: order.discount,
      total: order.total,
      currency: order.currency,
      voucherCode: order.voucherCode,
      paymentState: order.paymentState,
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
      history,
    };
  }

  /** Cancels an order before its payment succeeded: 202; afterwards 409 ORDER_NOT_CANCELLABLE. */
  @Post(':orderId/cancel')
  @HttpCode(202)
  async cancel(@CurrentTenant() tenant: Tenant, @Param('orderId') orderId: string): Promise<CancelAccepted> {
    if (!OrderId.safeParse(orderId).success) throw new OrderNotFound(orderId);
    return this.cancelOrder.execute(tenant.id, orderId);
  }
}
