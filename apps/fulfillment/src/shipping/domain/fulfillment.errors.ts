/** Stable codes of the fulfillment rules an event can break. */
export type FulfillmentErrorCode =
  'FULFILLMENT.UNKNOWN_TENANT' | 'FULFILLMENT.SAGA_MISMATCH' | 'FULFILLMENT.TENANT_MISMATCH';

/** A broken fulfillment rule: retrying cannot fix it, so the event is parked with this code. */
export class FulfillmentError extends Error {
  constructor(
    readonly code: FulfillmentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'FulfillmentError';
  }
}
