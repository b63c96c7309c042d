import { z } from 'zod';
import { OrderId, StockLine } from '../primitives';

/** fulfillment.shipment-cancelled v1: a created shipment was called back because its order was refunded. */
export const FulfillmentShipmentCancelledV1 = z.object({
  orderId: OrderId,
  shipmentId: z.uuid(),
  carrier: z.string().min(1).max(64),
  trackingNumber: z.string().min(1).max(128),
  lines: z.array(StockLine).min(1).max(100),
  reason: z.string().min(1).max(255),
});
export type FulfillmentShipmentCancelledV1 = z.infer<typeof FulfillmentShipmentCancelledV1>;
