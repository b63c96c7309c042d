import { Injectable } from '@nestjs/common';
import { Sql } from '../../../database';
import { ApologyVoucher, CatalogRepository, IssueOutcome } from '../../database/catalog.repository';

/** IssueVoucher: a customer's own voucher (an apology), created once per order, in the caller's transaction. */
@Injectable()
export class IssueVoucherHandler {
  constructor(private readonly catalog: CatalogRepository) {}

  async execute(tx: Sql, tenantId: string, voucher: ApologyVoucher): Promise<IssueOutcome> {
    return this.catalog.issueApologyVoucher(tx, tenantId, voucher);
  }
}
