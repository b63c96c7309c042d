import { z } from 'zod';
import { OrderId } from '../primitives';

/** fulfillment.shipment-created v1: a carrier accepted the shipment of a paid order. */
export const FulfillmentShipmentCreatedV1 = z.object({
  orderId: OrderId,
  shipmentId: z.uuid(),
  carrier: z.string().min(1).max(64),
  trackingNumber: z.string().min(1).max(128),
});
export type FulfillmentShipmentCreatedV1 = z.infer<typeof FulfillmentShipmentCreatedV1>;
