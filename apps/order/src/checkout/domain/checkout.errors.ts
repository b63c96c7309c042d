import { DomainError } from '@checkout/contracts';

/** Expected checkout failures with stable codes; the exception filter answers each with its code's status. */
export abstract class CheckoutError extends DomainError {}

/** A line names a SKU the tenant has no price for. */
export class UnknownSku extends CheckoutError {
  constructor(readonly skus: string[]) {
    super('UNKNOWN_SKU', `unknown SKU: ${skus.join(', ')}`);
    this.details.skus = skus;
  }
}

/** A checkout without its Idempotency-Key header. */
export class IdempotencyKeyRequired extends CheckoutError {
  constructor() {
    super('VALIDATION_FAILED', 'the Idempotency-Key header is required', {
      issues: [{ path: 'headers.idempotency-key', message: 'required' }],
    });
  }
}

/** The order's currency is not the currency of the tenant's price list for a SKU. */
export class CurrencyMismatch extends CheckoutError {
  constructor(currency: string, mismatched: { sku: string; currency: string }[]) {
    super('VALIDATION_FAILED', `currency ${currency} is not the price list's currency`);
    this.details.issues = mismatched.map((m) => ({
      path: 'currency',
      message: `${m.sku} is priced in ${m.currency}`,
    }));
  }
}

/** A price the shopper saw differs from the current one: they must confirm the new price. */
export class PriceChanged extends CheckoutError {
  constructor(
    changed: { sku: string; quoted: number; unitPrice: number }[],
    currentPrices: { sku: string; unitPrice: number; currency: string }[],
  ) {
    super('PRICE_CHANGED', `price changed for ${changed.map((c) => c.sku).join(', ')}`);
    this.details.changed = changed;
    this.details.currentPrices = currentPrices;
  }
}

/** The order's amounts exceed what the platform settles in one order (MAX_ORDER_TOTAL minor units). */
export class OrderTotalTooLarge extends CheckoutError {
  constructor(limit: number) {
    super('ORDER_TOTAL_TOO_LARGE', `the order total exceeds ${limit} minor units`);
    this.details.maxTotal = limit;
  }
}

/** The order comes to 0 (a 100% voucher, a free SKU): refused, the saga has no payment-less path. */
export class ZeroTotal extends CheckoutError {
  constructor() {
    super('ZERO_TOTAL', 'the order total is 0: free orders cannot be checked out');
  }
}

/** The voucher code does not exist for this tenant. */
export class UnknownVoucher extends CheckoutError {
  constructor(code: string) {
    super('UNKNOWN_VOUCHER', `unknown voucher ${code}`);
    this.details.voucherCode = code;
  }
}

/** Every redemption of the voucher is taken. */
export class VoucherExhausted extends CheckoutError {
  constructor(code: string) {
    super('VOUCHER_EXHAUSTED', `voucher ${code} has no redemptions left`);
    this.details.voucherCode = code;
  }
}

/** The flash-sale gate has fewer units of a SKU than asked. */
export class OutOfStock extends CheckoutError {
  constructor(sku: string, remaining: number) {
    super('OUT_OF_STOCK', `${sku} is out of stock`);
    this.details.sku = sku;
    this.details.remaining = remaining;
  }
}

/** Another request with the same Idempotency-Key is still being processed. */
export class IdempotencyKeyInUse extends CheckoutError {
  constructor() {
    super(
      'IDEMPOTENCY_KEY_IN_USE',
      'a request with this Idempotency-Key is still being processed; retry later',
    );
  }
}

/** The Idempotency-Key was used before with a different request body. */
export class IdempotencyKeyReused extends CheckoutError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request body');
  }
}

/** The flash-sale gate did not answer a take in time: nothing was created or held; retry with the same key. */
export class GateTimeout extends CheckoutError {
  constructor(readonly retryAfterSeconds: number) {
    super('GATE_TIMEOUT', 'the flash-sale gate did not answer in time; retry with the same Idempotency-Key');
    this.details.retryable = true;
    this.details.retryAfterSeconds = retryAfterSeconds;
  }
}
