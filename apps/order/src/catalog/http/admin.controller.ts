import { Body, Controller, Headers, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  CreateVoucherRequest,
  FlashSaleView,
  PriceView,
  PutFlashSaleRequest,
  PutPriceRequest,
  Sku,
} from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { SetFlashSaleHandler } from '../commands/set-flash-sale/set-flash-sale.handler';
import { CatalogRepository } from '../database/catalog.repository';
import { PriceOutOfRange, VoucherExists } from '../domain/catalog.errors';
import { MAX_UNIT_PRICE } from '../../checkout/domain/pricing';

/** The merchant's admin API: price list, vouchers, flash sales (docs/api.md, docs/openapi/order.json). */
@Controller('v1/admin')
@UseGuards(TenantGuard)
export class AdminController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: CatalogRepository,
    private readonly flashSales: SetFlashSaleHandler,
  ) {}

  /** Sets a SKU's price for this tenant. */
  @Put('prices/:sku')
  @HttpCode(200)
  async putPrice(
    @CurrentTenant() tenant: Tenant,
    @Param('sku') sku: string,
    @Body() body: unknown,
  ): Promise<PriceView> {
    const s = validate(Sku, sku, 'sku');
    const { unitPrice, currency } = validate(PutPriceRequest, body);
    if (unitPrice > MAX_UNIT_PRICE) throw new PriceOutOfRange(MAX_UNIT_PRICE);
    return this.catalog.putPrice(this.dataSource, tenant.id, s, unitPrice, currency);
  }

  /** Creates a voucher with a limited number of redemptions. */
  @Post('vouchers')
  @HttpCode(201)
  async createVoucher(@CurrentTenant() tenant: Tenant, @Body() body: unknown) {
    const v = validate(CreateVoucherRequest, body);
    if (!(await this.catalog.createVoucher(this.dataSource, tenant.id, v))) {
      throw new VoucherExists(v.code);
    }
    return { ...v, redeemed: 0 };
  }

  /** Turns the flash-sale gate on (primed from inventory, or `available` explicitly) or off for a SKU. */
  @Put('flash-sales/:sku')
  @HttpCode(200)
  async putFlashSale(
    @CurrentTenant() tenant: Tenant,
    @Param('sku') sku: string,
    @Body() body: unknown,
    @Headers('authorization') authorization: string,
  ): Promise<FlashSaleView> {
    const s = validate(Sku, sku, 'sku');
    const { enabled, available } = validate(PutFlashSaleRequest, body);
    const sale = await this.flashSales.execute({
      tenantId: tenant.id,
      sku: s,
      enabled,
      available,
      authorization,
    });
    return {
      sku: sale.sku,
      enabled: sale.enabled,
      available: sale.available,
      source: sale.source,
      updatedAt: sale.updatedAt,
    };
  }
}
