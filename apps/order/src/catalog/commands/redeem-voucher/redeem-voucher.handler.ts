import { Injectable } from '@nestjs/common';
import { Sql } from '../../../database';
import { CatalogRepository } from '../../database/catalog.repository';

/** RedeemVoucher: one redemption of the code for the order, in the caller's transaction (false: none left). */
@Injectable()
export class RedeemVoucherHandler {
  constructor(private readonly catalog: CatalogRepository) {}

  async execute(tx: Sql, tenantId: string, code: string, orderId: string): Promise<boolean> {
    return (await this.catalog.redeemVoucher(tx, tenantId, code, orderId)) !== null;
  }
}
