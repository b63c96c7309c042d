import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { UndoCheckoutHandler } from './commands/undo-checkout/undo-checkout.handler';
import { GateModule } from '../gate/gate.module';
import { OrderStockGate } from '../gate/stock-gate.provider';
import { CancelAfterPaymentFailureHandler } from './commands/cancel-after-payment-failure/cancel-after-payment-failure.handler';
import { CancelOrderHandler } from './commands/cancel-order/cancel-order.handler';
import { IssueApologyVoucherHandler } from './commands/issue-apology-voucher/issue-apology-voucher.handler';
import { OpenOrderHandler } from './commands/open-order/open-order.handler';
import { MarkAwaitingPaymentHandler } from './commands/mark-awaiting-payment/mark-awaiting-payment.handler';
import { MarkBackorderedHandler } from './commands/mark-backordered/mark-backordered.handler';
import { MarkPaidHandler } from './commands/mark-paid/mark-paid.handler';
import { MarkShippedHandler } from './commands/mark-shipped/mark-shipped.handler';
import { RecordPaymentStateHandler } from './commands/record-payment-state/record-payment-state.handler';
import { RejectOrderHandler } from './commands/reject-order/reject-order.handler';
import { SAGA_GATE } from './commands/saga-step';
import { SagaEventsConsumer } from './consumers/saga-events.consumer';
import { OrderRepository } from './database/order.repository';
import { OrdersController } from './http/orders.controller';

/** Orders after checkout: the saga's reactions, the customer's cancel, the orders API. */
@Module({
  imports: [GateModule, CatalogModule],
  // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
  controllers: [OrdersController, SagaEventsConsumer],
  providers: [
    OrderRepository,
    { provide: SAGA_GATE, useExisting: OrderStockGate },
    OpenOrderHandler,
    CancelOrderHandler,
    // The checkout's compensation, run by the saga's reactions (REJECTED, CANCELLED).
    UndoCheckoutHandler,
    MarkAwaitingPaymentHandler,
    RejectOrderHandler,
    MarkPaidHandler,
    MarkBackorderedHandler,
    RecordPaymentStateHandler,
    CancelAfterPaymentFailureHandler,
    MarkShippedHandler,
    IssueApologyVoucherHandler,
  ],
  // The commands other areas call (checkout opens orders); the repository stays inside the area.
  exports: [OpenOrderHandler],
})
export class OrdersModule {}
