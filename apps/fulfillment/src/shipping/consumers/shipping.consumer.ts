import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { RecordNotificationHandler } from '../../notifications/commands';
import { CancelShipmentHandler, CreateShipmentHandler } from '../commands';

/** Shipments in reaction to the saga: booked when the order is paid, called back when it is refunded. */
@Controller()
export class ShippingConsumer {
  constructor(
    private readonly createShipment: CreateShipmentHandler,
    private readonly cancelShipment: CancelShipmentHandler,
    private readonly notify: RecordNotificationHandler,
  ) {}

  /** CreateShipment (shipment-created or shipment-failed) and the order confirmation email. */
  @EventPattern('order.paid')
  async orderPaid(@Payload() event: SagaEvent<'order.paid'>, @Ctx() { tx }: InboxContext): Promise<void> {
    const order = event.payload;
    await this.notify.rememberCustomer(tx, event.tenantId, order.orderId, order.customerId);
    const outcome = await this.createShipment.execute(tx, { tenantId: event.tenantId, order, cause: event });
    if (outcome === 'skipped_refunded') return;
    await this.notify.confirmOrder(tx, event.tenantId, order, event);
  }

  /** CancelShipment: a booked shipment is called back; nothing else changes. */
  @EventPattern('payment.refunded')
  async paymentRefunded(
    @Payload() event: SagaEvent<'payment.refunded'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    const { orderId, reason } = event.payload;
    await this.cancelShipment.execute(tx, {
      tenantId: event.tenantId,
      orderId,
      reason: `order_refunded: ${reason}`,
      cause: event,
    });
  }
}
