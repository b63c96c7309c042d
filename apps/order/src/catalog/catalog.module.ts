import { Module } from '@nestjs/common';
import { GateModule } from '../gate/gate.module';
import { CatalogMetrics } from './catalog.metrics';
import { IssueVoucherHandler } from './commands/issue-voucher/issue-voucher.handler';
import { MarkAnsweredCheckoutsHandler } from './commands/mark-answered-checkouts/mark-answered-checkouts.handler';
import { QuoteCheckoutHandler } from './commands/quote-checkout/quote-checkout.handler';
import { RedeemVoucherHandler } from './commands/redeem-voucher/redeem-voucher.handler';
import { ReturnVoucherHandler } from './commands/return-voucher/return-voucher.handler';
import { SetFlashSaleHandler } from './commands/set-flash-sale/set-flash-sale.handler';
import { CatalogRepository } from './database/catalog.repository';
import { AdminController } from './http/admin.controller';
import { RearmFlashSaleGatesJob } from './jobs/rearm-flash-sale-gates.job';

/** Prices, vouchers and flash sales: the admin API and the job that re-arms lost gates. */
@Module({
  imports: [GateModule],
  controllers: [AdminController],
  providers: [
    CatalogRepository,
    CatalogMetrics,
    SetFlashSaleHandler,
    MarkAnsweredCheckoutsHandler,
    RearmFlashSaleGatesJob,
    QuoteCheckoutHandler,
    RedeemVoucherHandler,
    ReturnVoucherHandler,
    IssueVoucherHandler,
  ],
  // The commands other areas call; the repository stays inside the area.
  exports: [QuoteCheckoutHandler, RedeemVoucherHandler, ReturnVoucherHandler, IssueVoucherHandler],
})
export class CatalogModule {}
