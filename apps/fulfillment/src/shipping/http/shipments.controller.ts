import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OrderQuery, ShipmentsView } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { shipmentsOfOrder } from '../database/shipment.repository';

/**
 * GET /v1/shipments?orderId=: the order's shipments. Tenant-scoped: another tenant's order answers an empty
 * list (not 404), the same as an order fulfillment has not shipped yet, so nothing tells the two apart.
 */
@Controller('v1/shipments')
@UseGuards(TenantGuard)
export class ShipmentsController {
  constructor(private readonly dataSource: DataSource) {}

  @Get()
  async list(@CurrentTenant() tenant: Tenant, @Query() query: unknown): Promise<ShipmentsView> {
    const { orderId } = validate(OrderQuery, query, 'query');
    return { orderId, shipments: await shipmentsOfOrder(this.dataSource, tenant.id, orderId) };
  }
}
