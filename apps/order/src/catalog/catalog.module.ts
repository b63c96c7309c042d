import { Module } from '@nestjs/common';
import { GateModule } from '../gate/gate.module';
import { CatalogMetrics } from './catalog.metrics';
import { SetFlashSaleHandler } from './commands/set-flash-sale/set-flash-sale.handler';
import { CatalogRepository } from './database/catalog.repository';
import { AdminController } from './http/admin.controller';
import { RearmFlashSaleGatesJob } from './jobs/rearm-flash-sale-gates.job';

/** Prices, vouchers and flash sales: the admin API and the job that re-arms lost gates. */
@Module({
  imports: [GateModule],
  controllers: [AdminController],
  providers: [CatalogRepository, CatalogMetrics, SetFlashSaleHandler, RearmFlashSaleGatesJob],
  exports: [CatalogRepository],
})
export class CatalogModule {}
