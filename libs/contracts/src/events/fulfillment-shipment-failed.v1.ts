import { z } from 'zod';
import { OrderId, StockLine } from '../primitives';

/** fulfillment.shipment-failed v1: the carrier refused; payment refunds and inventory returns the sold units. */
export const FulfillmentShipmentFailedV1 = z.object({
  orderId: OrderId,
  lines: z.array(StockLine).min(1).max(100),
  reason: z.string().min(1).max(255),
});
export type FulfillmentShipmentFailedV1 = z.infer<typeof FulfillmentShipmentFailedV1>;
