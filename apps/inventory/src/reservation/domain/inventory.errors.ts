/** Stable codes of the inventory rules an event or a request can break. */
export type InventoryErrorCode =
  | 'INVENTORY.LINE_TOO_LARGE'
  | 'INVENTORY.SAGA_MISMATCH'
  | 'INVENTORY.UNKNOWN_TENANT'
  | 'INVENTORY.NO_RESERVATION';

/** An expected failure of an inventory rule: consumers park it on the DLQ, HTTP answers 4xx. */
export class InventoryError extends Error {
  constructor(
    readonly code: InventoryErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'InventoryError';
  }
}
