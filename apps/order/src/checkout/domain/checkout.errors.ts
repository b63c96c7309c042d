/** Expected checkout failures with stable codes; the HTTP layer turns each into its 4xx answer. */
export abstract class CheckoutError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  readonly details: Record<string, unknown> = {};
}

/** A line names a SKU the tenant has no price for. */
export class UnknownSku extends CheckoutError {
  readonly code = 'UNKNOWN_SKU';
  readonly status = 404;
  constructor(readonly skus: string[]) {
    super(`unknown SKU: ${skus.join(', ')}`);
    this.details.skus = skus;
  }
}

/** The order's currency is not the currency of the tenant's price list for a SKU. */
export class CurrencyMismatch extends CheckoutError {
  readonly code = 'VALIDATION_FAILED';
  readonly status = 400;
  constructor(currency: string, mismatched: { sku: string; currency: string }[]) {
    super(`currency ${currency} is not the price list's currency`);
    this.details.issues = mismatched.map((m) => ({
      path: 'currency',
      message: `${m.sku} is priced in ${m.currency}`,
    }));
  }
}

/** A price the shopper saw differs from the current one: they must confirm the new price. */
export class PriceChanged extends CheckoutError {
  readonly code = 'PRICE_CHANGED';
  readonly status = 409;
  constructor(
    changed: { sku: string; quoted: number; unitPrice: number }[],
    currentPrices: { sku: string; unitPrice: number; currency: string }[],
  ) {
    super(`price changed for ${changed.map((c) => c.sku).join(', ')}`);
    this.details.changed = changed;
    this.details.currentPrices = currentPrices;
  }
}

/** The order's amounts exceed what the platform settles in one order (MAX_ORDER_TOTAL minor units). */
export class OrderTotalTooLarge extends CheckoutError {
  readonly code = 'ORDER_TOTAL_TOO_LARGE';
  readonly status = 422;
  constructor(limit: number) {
    super(`the order total exceeds ${limit} minor units`);
    this.details.maxTotal = limit;
  }
}

/**
 * The order comes to 0 (a 100% voucher, a free SKU): there is nothing to charge, and the saga has no
 * payment-less path, so such an order is refused rather than left waiting for a payment that cannot happen.
 */
export class ZeroTotal extends CheckoutError {
  readonly code = 'ZERO_TOTAL';
  readonly status = 422;
  constructor() {
    super('the order total is 0: free orders cannot be checked out');
  }
}

/** The voucher code does not exist for this tenant. */
export class UnknownVoucher extends CheckoutError {
  readonly code = 'UNKNOWN_VOUCHER';
  readonly status = 404;
  constructor(code: string) {
    super(`unknown voucher ${code}`);
    this.details.voucherCode = code;
  }
}

/** Every redemption of the voucher is taken. */
export class VoucherExhausted extends CheckoutError {
  readonly code = 'VOUCHER_EXHAUSTED';
  readonly status = 409;
  constructor(code: string) {
    super(`voucher ${code} has no redemptions left`);
    this.details.voucherCode = code;
  }
}

/** The flash-sale gate has fewer units of a SKU than asked. */
export class OutOfStock extends CheckoutError {
  readonly code = 'OUT_OF_STOCK';
  readonly status = 409;
  constructor(sku: string, remaining: number) {
    super(`${sku} is out of stock`);
    this.details.sku = sku;
    this.details.remaining = remaining;
  }
}

/** Another request with the same Idempotency-Key is still being processed. */
export class IdempotencyKeyInUse extends CheckoutError {
  readonly code = 'IDEMPOTENCY_KEY_IN_USE';
  readonly status = 409;
  constructor() {
    super('a request with this Idempotency-Key is still being processed; retry later');
  }
}

/** The Idempotency-Key was used before with a different request body. */
export class IdempotencyKeyReused extends CheckoutError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  readonly status = 422;
  constructor() {
    super('this Idempotency-Key was used with a different request body');
  }
}

/**
 * The flash-sale gate did not answer a take in time (slow Redis, not a Redis that is down). Its outcome is
 * unknown, so the checkout neither goes to the database nor keeps a unit: nothing was created, nothing is
 * held, and a retry with the same Idempotency-Key is safe.
 */
export class GateTimeout extends CheckoutError {
  readonly code = 'GATE_TIMEOUT';
  readonly status = 503;
  constructor(readonly retryAfterSeconds: number) {
    super('the flash-sale gate did not answer in time; retry with the same Idempotency-Key');
    this.details.retryable = true;
    this.details.retryAfterSeconds = retryAfterSeconds;
  }
}
