import { SHIPMENT_STATUSES, type ShipmentStatus } from '@checkout/contracts';

/** The states of a shipment (booked, refused by the carrier, called back after a refund), as the API shows them. */
export { SHIPMENT_STATUSES, type ShipmentStatus };

/** "Target status <- statuses it may be entered from": only a booked shipment can be cancelled. */
export const SHIPMENT_ALLOWED_FROM: Readonly<Record<ShipmentStatus, readonly ShipmentStatus[]>> = {
  created: [],
  failed: [],
  cancelled: ['created'],
};

/** Whether a shipment may move from one status to another. */
export const canMoveShipment = (from: ShipmentStatus, to: ShipmentStatus): boolean =>
  SHIPMENT_ALLOWED_FROM[to].includes(from);
