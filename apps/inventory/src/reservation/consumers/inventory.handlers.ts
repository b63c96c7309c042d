import { HandlerMap } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { CommitStock, ReleaseStock, ReserveStock, ReturnSoldStock } from '../commands';
import { onOrderCancelled } from './order-cancelled.consumer';
import { onOrderCreated } from './order-created.consumer';
import { onPaymentFailed } from './payment-failed.consumer';
import { onPaymentSucceeded } from './payment-succeeded.consumer';
import { onShipmentFailed } from './shipment-failed.consumer';

/** Commands the inventory consumer calls. */
export interface InventoryCommands {
  reserve: ReserveStock;
  release: ReleaseStock;
  commit: CommitStock;
  returnSold: ReturnSoldStock;
}

/** The events inventory reacts to, each one applied in the consumer's inbox transaction. */
export function inventoryHandlers(tenants: TenantRegistry, c: InventoryCommands): HandlerMap {
  return {
    'order.created': onOrderCreated(tenants, c.reserve),
    'order.cancelled': onOrderCancelled(tenants, c.release),
    'payment.failed': onPaymentFailed(tenants, c.release),
    'payment.succeeded': onPaymentSucceeded(tenants, c.commit),
    'fulfillment.shipment-failed': onShipmentFailed(tenants, c.returnSold),
  };
}
