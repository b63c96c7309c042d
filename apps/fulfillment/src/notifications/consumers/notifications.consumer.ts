import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { RecordNotificationHandler } from '../commands';

/** The customer emails fulfillment queues in reaction to the saga (the notifier sends them after commit). */
@Controller()
export class NotificationsConsumer {
  constructor(private readonly notify: RecordNotificationHandler) {}

  /** Remembers the order's customer: the recipient of later emails whose events lack it. */
  @EventPattern('order.created')
  async orderCreated(
    @Payload() event: SagaEvent<'order.created'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.notify.rememberCustomer(tx, event.tenantId, event.payload.orderId, event.payload.customerId);
  }

  /** The payment-failed email. */
  @EventPattern('payment.failed')
  async paymentFailed(
    @Payload() event: SagaEvent<'payment.failed'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.notify.paymentFailed(tx, event.tenantId, event.payload, event);
  }

  /** The apology email with a voucher code (payment refunds the charge). */
  @EventPattern('inventory.unavailable-after-payment')
  async unavailableAfterPayment(
    @Payload() event: SagaEvent<'inventory.unavailable-after-payment'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.notify.apologise(tx, event.tenantId, event.payload, event);
  }
}
