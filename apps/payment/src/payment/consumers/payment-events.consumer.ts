import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext, InboxPatternExtras } from '@checkout/messaging';
import { CancelPaymentHandler } from '../commands/cancel-payment/cancel-payment.handler';
import { RecordAttemptsHandler } from '../commands/record-attempts/record-attempts.handler';
import { RequestRefundHandler } from '../commands/request-refund/request-refund.handler';

/**
 * inventory.reserved in chunks (group commit) in a consumer group of its own, `payment-attempts`: a flash sale's
 * burst of reservations does not wait one transaction per event.
 */
const ATTEMPTS: InboxPatternExtras = { batch: true, group: 'attempts' };

/** Payment's reactions to the saga, each under its order's lock (docs/design/payment.md). */
@Controller()
export class PaymentEventsConsumer {
  constructor(
    private readonly attempts: RecordAttemptsHandler,
    private readonly refunds: RequestRefundHandler,
    private readonly cancel: CancelPaymentHandler,
  ) {}

  /** A new payment attempt per order, none for an order already cancelled (docs/design/payment.md). */
  @EventPattern('inventory.reserved', ATTEMPTS)
  async inventoryReserved(
    @Payload() events: SagaEvent<'inventory.reserved'>[],
    @Ctx() ctx: InboxContext,
  ): Promise<void> {
    await this.attempts.execute(ctx, events);
  }

  @EventPattern('inventory.unavailable-after-payment')
  async unavailableAfterPayment(
    @Payload() event: SagaEvent<'inventory.unavailable-after-payment'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.refunds.compensate(tx, event, 'inventory_unavailable_after_payment');
  }

  @EventPattern('fulfillment.shipment-failed')
  async shipmentFailed(
    @Payload() event: SagaEvent<'fulfillment.shipment-failed'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.refunds.compensate(tx, event, 'shipment_failed');
  }

  @EventPattern('order.cancelled')
  async orderCancelled(
    @Payload() event: SagaEvent<'order.cancelled'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.cancel.execute(tx, event);
  }
}
