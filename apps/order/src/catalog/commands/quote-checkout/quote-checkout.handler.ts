import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ListPrice } from '../../../checkout/domain/pricing';
import { CatalogRepository, Voucher } from '../../database/catalog.repository';

/** What a checkout is priced from: the list prices of its SKUs and the voucher it names. */
export interface CheckoutQuote {
  prices: ListPrice[];
  /** Undefined when no code was given, or none the customer may use (a code bound to someone else is secret). */
  voucher: Voucher | undefined;
}

/** QuoteCheckout: the catalog's prices and the customer's voucher, read outside the checkout's transaction. */
@Injectable()
export class QuoteCheckoutHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: CatalogRepository,
  ) {}

  async execute(
    tenantId: string,
    customerId: string,
    skus: string[],
    voucherCode?: string,
  ): Promise<CheckoutQuote> {
    const prices = await this.catalog.prices(this.dataSource, tenantId, skus);
    const found = voucherCode
      ? await this.catalog.voucher(this.dataSource, tenantId, voucherCode)
      : undefined;
    const usable = found && (found.customerId === null || found.customerId === customerId);
    return { prices, voucher: usable ? found : undefined };
  }
}
