import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { FulfillmentMetrics } from '../../fulfillment.metrics';
import { RecordNotification } from '../../notifications/commands';
import { rememberCustomer } from '../../notifications/database/notification.repository';
import { CancelShipment, CreateShipment } from '../commands';

/** Shipments in reaction to the saga: booked when the order is paid, called back when it is refunded. */
@Controller()
export class ShippingConsumer {
  constructor(
    private readonly createShipment: CreateShipment,
    private readonly cancelShipment: CancelShipment,
    private readonly notify: RecordNotification,
    private readonly metrics: FulfillmentMetrics,
  ) {}

  /** CreateShipment (shipment-created or shipment-failed) and the order confirmation email. */
  @EventPattern('order.paid')
  async orderPaid(@Payload() event: SagaEvent<'order.paid'>, @Ctx() { tx }: InboxContext): Promise<void> {
    const order = event.payload;
    await rememberCustomer(tx, event.tenantId, order.orderId, order.customerId);
    const outcome = await this.createShipment.execute(tx, { tenantId: event.tenantId, order, cause: event });
    this.metrics.shipmentDecided(outcome);
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
    const outcome = await this.cancelShipment.execute(tx, {
      tenantId: event.tenantId,
      orderId,
      reason: `order_refunded: ${reason}`,
      cause: event,
    });
    if (outcome === 'cancelled') this.metrics.shipmentDecided('cancelled');
  }
}
