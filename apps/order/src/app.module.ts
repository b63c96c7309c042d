import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { SetFlashSaleHandler } from './catalog/commands/enable-flash-sale/enable-flash-sale.handler';
import { CatalogRepository } from './catalog/database/catalog.repository';
import { AdminController } from './catalog/http/admin.controller';
import { RearmFlashSaleGatesJob } from './catalog/jobs/rearm-flash-sale-gates.job';
import { ExpireIdempotencyKeysJob } from './checkout/commands/expire-idempotency-keys/expire-idempotency-keys.job';
import {
  IDEMPOTENCY_REPOSITORY,
  PlaceOrderHandler,
} from './checkout/commands/place-order/place-order.handler';
import { IdempotencyRepository } from './checkout/database/idempotency.repository';
import { CheckoutController } from './checkout/http/checkout.controller';
import { OrderConfig } from './config/order.config';
import { DATABASE } from './database';
import { OrderStockGate } from './gate/stock-gate.provider';
import { CancelOrderHandler } from './orders/commands/cancel-order/cancel-order.handler';
import { UndoCheckout } from './checkout/commands/undo-checkout/undo-checkout.handler';
import { CancelAfterPaymentFailure } from './orders/commands/cancel-after-payment-failure/cancel-after-payment-failure.handler';
import { IssueApologyVoucher } from './orders/commands/issue-apology-voucher/issue-apology-voucher.handler';
import { MarkAwaitingPayment } from './orders/commands/mark-awaiting-payment/mark-awaiting-payment.handler';
import { MarkBackordered } from './orders/commands/mark-backordered/mark-backordered.handler';
import { MarkPaid } from './orders/commands/mark-paid/mark-paid.handler';
import { MarkShipped } from './orders/commands/mark-shipped/mark-shipped.handler';
import { RecordPaymentState } from './orders/commands/record-payment-state/record-payment-state.handler';
import { RejectOrder } from './orders/commands/reject-order/reject-order.handler';
import { SAGA_GATE } from './orders/commands/saga-step';
import { SagaEventsConsumer } from './orders/consumers/saga-events.consumer';
import { OrderRepository } from './orders/database/order.repository';
import { OrdersController } from './orders/http/orders.controller';

/** The order service. */
@Module({})
export class AppModule {
  static register(config: OrderConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'order',
          aggregateType: 'order',
          consumers: { codePrefix: 'ORDER' },
        }),
      ],
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [CheckoutController, OrdersController, AdminController, SagaEventsConsumer],
      providers: [
        { provide: OrderRepository, useValue: new OrderRepository() },
        { provide: CatalogRepository, useValue: new CatalogRepository() },
        {
          provide: IDEMPOTENCY_REPOSITORY,
          useValue: new IdempotencyRepository(config.IDEMPOTENCY_LEASE_MS, config.IDEMPOTENCY_KEY_TTL_HOURS),
        },
        OrderStockGate,
        PlaceOrderHandler,
        CancelOrderHandler,
        SetFlashSaleHandler,
        ExpireIdempotencyKeysJob,
        RearmFlashSaleGatesJob,
        { provide: SAGA_GATE, useExisting: OrderStockGate },
        UndoCheckout,
        MarkAwaitingPayment,
        RejectOrder,
        MarkPaid,
        MarkBackordered,
        RecordPaymentState,
        CancelAfterPaymentFailure,
        MarkShipped,
        IssueApologyVoucher,
      ],
    };
  }
}
