/** The states of a shipment: booked, refused by the carrier, or called back after a refund. */
export const SHIPMENT_STATUSES = ['created', 'failed', 'cancelled'] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/** "Target status <- statuses it may be entered from": only a booked shipment can be cancelled. */
export const SHIPMENT_ALLOWED_FROM: Readonly<Record<ShipmentStatus, readonly ShipmentStatus[]>> = {
  created: [],
  failed: [],
  cancelled: ['created'],
};

/** Whether a shipment may move from one status to another. */
export const canMoveShipment = (from: ShipmentStatus, to: ShipmentStatus): boolean =>
  SHIPMENT_ALLOWED_FROM[to].includes(from);
