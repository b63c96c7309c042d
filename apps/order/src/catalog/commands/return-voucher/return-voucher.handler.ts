import { Injectable } from '@nestjs/common';
import { Sql } from '../../../database';
import { CatalogRepository } from '../../database/catalog.repository';

/** ReturnVoucher: the order's redemption, if any, goes back to its voucher, once, in the caller's transaction. */
@Injectable()
export class ReturnVoucherHandler {
  constructor(private readonly catalog: CatalogRepository) {}

  async execute(tx: Sql, tenantId: string, orderId: string): Promise<boolean> {
    return this.catalog.returnVoucher(tx, tenantId, orderId);
  }
}
