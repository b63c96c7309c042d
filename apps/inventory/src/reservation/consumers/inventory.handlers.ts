import { HandlerMap } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { CommitStock, ReleaseStock, ReturnSoldStock } from '../commands';
import { onOrderCancelled } from './order-cancelled.consumer';
import { onPaymentFailed } from './payment-failed.consumer';
import { onPaymentSucceeded } from './payment-succeeded.consumer';
import { onShipmentFailed } from './shipment-failed.consumer';

/** Commands the inventory consumer calls. */
export interface InventoryCommands {
  release: ReleaseStock;
  commit: CommitStock;
  returnSold: ReturnSoldStock;
}

/**
 * The events inventory reacts to one at a time, each applied in the consumer's inbox transaction.
 * order.created is not here: it is consumed in batches (OrderCreatedConsumerHost).
 */
export function inventoryHandlers(tenants: TenantRegistry, c: InventoryCommands): HandlerMap {
  return {
    'order.cancelled': onOrderCancelled(tenants, c.release, c.returnSold),
    'payment.failed': onPaymentFailed(tenants, c.release),
    'payment.succeeded': onPaymentSucceeded(tenants, c.commit),
    'fulfillment.shipment-failed': onShipmentFailed(tenants, c.returnSold),
  };
}
