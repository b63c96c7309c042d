import { DomainError, ErrorCode } from '@checkout/contracts';

/** Stable codes of the inventory rules an event can break. */
export type InventoryErrorCode = Extract<ErrorCode, `INVENTORY.${string}`>;

/** An expected failure of an inventory rule: consumers park it on the DLQ with its code. */
export class InventoryError extends DomainError {
  constructor(code: InventoryErrorCode, message: string) {
    super(code, message);
  }
}

/** No stock record for the SKU in this tenant. */
export class NoStock extends DomainError {
  constructor(sku: string) {
    super('UNKNOWN_SKU', `no stock for SKU ${sku}`, { sku });
  }
}
