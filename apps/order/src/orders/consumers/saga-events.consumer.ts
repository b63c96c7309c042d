import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { UndoCheckoutHandler } from '../commands/undo-checkout/undo-checkout.handler';
import { CancelAfterPaymentFailureHandler } from '../commands/cancel-after-payment-failure/cancel-after-payment-failure.handler';
import { IssueApologyVoucherHandler } from '../commands/issue-apology-voucher/issue-apology-voucher.handler';
import { MarkAwaitingPaymentHandler } from '../commands/mark-awaiting-payment/mark-awaiting-payment.handler';
import { MarkBackorderedHandler } from '../commands/mark-backordered/mark-backordered.handler';
import { MarkPaidHandler } from '../commands/mark-paid/mark-paid.handler';
import { MarkShippedHandler } from '../commands/mark-shipped/mark-shipped.handler';
import { RecordPaymentStateHandler } from '../commands/record-payment-state/record-payment-state.handler';
import { RejectOrderHandler } from '../commands/reject-order/reject-order.handler';

/**
 * The order's reactions to the other services' events, one named command each, in the event's inbox
 * transaction (the transport's). Gate calls run after commit.
 */
@Controller()
export class SagaEventsConsumer {
  constructor(
    private readonly markAwaitingPayment: MarkAwaitingPaymentHandler,
    private readonly reject: RejectOrderHandler,
    private readonly markPaid: MarkPaidHandler,
    private readonly markBackordered: MarkBackorderedHandler,
    private readonly recordPaymentState: RecordPaymentStateHandler,
    private readonly cancelAfterPaymentFailure: CancelAfterPaymentFailureHandler,
    private readonly markShipped: MarkShippedHandler,
    private readonly issueApologyVoucher: IssueApologyVoucherHandler,
    private readonly undoCheckout: UndoCheckoutHandler,
  ) {}

  @EventPattern('inventory.reserved')
  async inventoryReserved(
    @Payload() e: SagaEvent<'inventory.reserved'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.markAwaitingPayment.execute(ctx, e);
  }

  @EventPattern('inventory.rejected')
  async inventoryRejected(
    @Payload() e: SagaEvent<'inventory.rejected'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.reject.execute(ctx, e);
  }

  /** The reservation expired or was released: the gate gets its units back (once per hold). */
  @EventPattern('inventory.released')
  async inventoryReleased(
    @Payload() e: SagaEvent<'inventory.released'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.undoCheckout.onStockReleased(ctx, e);
  }

  @EventPattern('inventory.committed')
  async inventoryCommitted(
    @Payload() e: SagaEvent<'inventory.committed'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.markPaid.onStockCommitted(ctx, e);
  }

  @EventPattern('inventory.backordered')
  async inventoryBackordered(
    @Payload() e: SagaEvent<'inventory.backordered'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.markBackordered.execute(ctx, e);
  }

  @EventPattern('payment.succeeded')
  async paymentSucceeded(
    @Payload() e: SagaEvent<'payment.succeeded'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    // Under the order's saga lock: when the stock half is not recorded yet, inventory.committed moves it later.
    if ((await this.recordPaymentState.execute(ctx, e)) !== false) await this.markPaid.execute(ctx, e);
  }

  @EventPattern('payment.failed')
  async paymentFailed(@Payload() e: SagaEvent<'payment.failed'>, @Ctx() ctx: InboxContext): Promise<void> {
    await this.recordPaymentState.execute(ctx, e);
    await this.cancelAfterPaymentFailure.execute(ctx, e);
  }

  @EventPattern('payment.refunded')
  async paymentRefunded(
    @Payload() e: SagaEvent<'payment.refunded'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.recordPaymentState.execute(ctx, e);
  }

  @EventPattern('fulfillment.shipment-created')
  async shipmentCreated(
    @Payload() e: SagaEvent<'fulfillment.shipment-created'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.markShipped.execute(ctx, e);
  }

  @EventPattern('fulfillment.apology-voucher-issued')
  async apologyVoucherIssued(
    @Payload() e: SagaEvent<'fulfillment.apology-voucher-issued'>,
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.issueApologyVoucher.execute(ctx, e);
  }
}
