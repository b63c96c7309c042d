import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NotificationsView, OrderQuery } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { notificationsOfOrder } from '../database/notification.repository';

/**
 * GET /v1/notifications?orderId=: the emails recorded for the order's customer, pending and sent.
 * Tenant-scoped: another tenant's order answers an empty list (not 404), like an order with no email yet.
 */
@Controller('v1/notifications')
@UseGuards(TenantGuard)
export class NotificationsController {
  constructor(private readonly dataSource: DataSource) {}

  @Get()
  async list(@CurrentTenant() tenant: Tenant, @Query() query: unknown): Promise<NotificationsView> {
    const { orderId } = validate(OrderQuery, query, 'query');
    return { orderId, notifications: await notificationsOfOrder(this.dataSource, tenant.id, orderId) };
  }
}
