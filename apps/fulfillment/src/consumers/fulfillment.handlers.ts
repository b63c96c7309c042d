import { HandlerMap } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { FulfillmentMetrics } from '../fulfillment.metrics';
import { RecordNotification } from '../notifications/commands';
import { onOrderCreated } from '../notifications/consumers/order-created.consumer';
import { onPaymentFailed } from '../notifications/consumers/payment-failed.consumer';
import { onUnavailableAfterPayment } from '../notifications/consumers/unavailable-after-payment.consumer';
import { CancelShipment, CreateShipment } from '../shipping/commands';
import { onOrderPaid } from '../shipping/consumers/order-paid.consumer';
import { onPaymentRefunded } from '../shipping/consumers/payment-refunded.consumer';

/** Commands the fulfillment consumer calls. */
export interface FulfillmentCommands {
  createShipment: CreateShipment;
  cancelShipment: CancelShipment;
  notify: RecordNotification;
}

/** The events fulfillment reacts to, each one applied in the consumer's inbox transaction. */
export function fulfillmentHandlers(
  tenants: TenantRegistry,
  c: FulfillmentCommands,
  metrics: FulfillmentMetrics,
): HandlerMap {
  return {
    'order.created': onOrderCreated(tenants),
    'order.paid': onOrderPaid(tenants, c.createShipment, c.notify, metrics),
    'payment.refunded': onPaymentRefunded(tenants, c.cancelShipment, metrics),
    'payment.failed': onPaymentFailed(tenants, c.notify),
    'inventory.unavailable-after-payment': onUnavailableAfterPayment(tenants, c.notify),
  };
}
