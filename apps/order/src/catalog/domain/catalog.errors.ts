import { DomainError } from '@checkout/contracts';

/** A unit price above the largest the platform accepts. */
export class PriceOutOfRange extends DomainError {
  constructor(maxUnitPrice: number) {
    super('PRICE_OUT_OF_RANGE', `unitPrice must be at most ${maxUnitPrice} minor units`, { maxUnitPrice });
  }
}

/** A voucher with this code exists already for the tenant. */
export class VoucherExists extends DomainError {
  constructor(code: string) {
    super('VOUCHER_EXISTS', `voucher ${code} exists already`, { code });
  }
}

/** The flash-sale gate (Redis) could not be changed. */
export class GateUnavailable extends DomainError {
  constructor(reason: string) {
    super('GATE_UNAVAILABLE', `the flash-sale gate is unavailable: ${reason}`);
  }
}

/** Inventory could not tell the available units that prime the gate. */
export class InventoryUnavailable extends DomainError {
  constructor(why: string) {
    super(
      'INVENTORY_UNAVAILABLE',
      `${why}; send { "enabled": true, "available": N } to prime the gate explicitly`,
    );
  }
}

/** Inventory has no stock record for the SKU of a flash sale. */
export class NoStockRecord extends DomainError {
  constructor(sku: string) {
    super('UNKNOWN_SKU', `inventory has no stock record for ${sku}`, { skus: [sku] });
  }
}
