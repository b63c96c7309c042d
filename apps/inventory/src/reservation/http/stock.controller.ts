import { Body, Controller, Get, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SetStockRequest, Sku, StockSetView, StockView } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { SetStockHandler } from '../commands';
import { stockWithOverdue } from '../database/stock.repository';
import { NoStock, visibleStock } from '../domain';

/** The inventory HTTP API (docs/api.md, docs/openapi/inventory.json), scoped to the caller's tenant. */
@Controller('v1')
@UseGuards(TenantGuard)
export class StockController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly setStock: SetStockHandler,
  ) {}

  /** Sets the on-hand available units (the difference is recorded as a restock) and the backorder flag. */
  @Put('admin/stock/:sku')
  @HttpCode(200)
  async put(
    @CurrentTenant() tenant: Tenant,
    @Param('sku') rawSku: string,
    @Body() body: unknown,
  ): Promise<StockSetView> {
    const sku = validate(Sku, rawSku, 'sku');
    const input = validate(SetStockRequest, body);
    const row = await this.dataSource.transaction((tx) =>
      this.setStock.execute(tx, { tenantId: tenant.id, sku, ...input }),
    );
    return {
      sku: row.sku,
      available: row.available,
      reserved: row.reserved,
      sold: row.sold,
      allowBackorder: row.allowBackorder,
      reservationTtlSeconds: row.reservationTtlSeconds,
    };
  }

  /** Stock of one SKU; holds past their TTL count as available (lazy expiry). 404 for another tenant's SKU. */
  @Get('stock/:sku')
  async get(@CurrentTenant() tenant: Tenant, @Param('sku') rawSku: string): Promise<StockView> {
    const sku = validate(Sku, rawSku, 'sku');
    const row = await stockWithOverdue(this.dataSource, tenant.id, sku);
    if (!row) throw new NoStock(sku);
    const { overdue, reservationTtlSeconds, ...counters } = row;
    return { sku: counters.sku, ...visibleStock(counters, overdue), reservationTtlSeconds };
  }
}
