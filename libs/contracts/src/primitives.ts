import { z } from 'zod';

/** A tenant id: lowercase slug, as issued with the tenant's API key. */
export const TenantId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'tenantId must be a lowercase slug');

/** A SKU as merchants write it: 1..64 visible characters. */
export const Sku = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'sku must be 1..64 of [A-Za-z0-9._-]');

/**
 * An identifier a merchant or a client chooses and we only store and pass on (customer id, payment token, PSP
 * reference): 1..max characters of any script, but no control, format or separator characters (no NUL, newline,
 * escape, bidi override or zero-width character: they forge log lines, break CSV exports and spoof ids on
 * screen) and no space at either end.
 */
export const ExternalId = (max: number, what = 'id') =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\p{C}\p{Zl}\p{Zp}]*$/u, `${what} must not contain control or invisible characters`)
    .refine((s) => s.trim() === s, `${what} must not start or end with a space`);

/** A voucher code as merchants and the apology email write it: 1..64 of [A-Za-z0-9_-]. */
export const VoucherCode = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'voucher code must be 1..64 of [A-Za-z0-9_-]');

/** ISO 4217 currency code. */
export const Currency = z.string().regex(/^[A-Z]{3}$/, 'currency must be an ISO 4217 code');

/** Money in integer minor units; never a float. */
export const MinorUnits = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Quantity of one order line. */
export const Quantity = z.number().int().min(1).max(1000);

/** Identifier of an order, which is also the saga id and the Kafka key. */
export const OrderId = z.uuid();

/** ISO-8601 timestamp with offset. */
export const Timestamp = z.iso.datetime({ offset: true });

/** W3C trace context header value. */
export const Traceparent = z
  .string()
  .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'not a W3C traceparent');

/** An order line as priced and snapshotted by the order service at checkout. */
export const PricedLine = z.object({
  sku: Sku,
  quantity: Quantity,
  unitPrice: MinorUnits,
  discount: MinorUnits,
  lineTotal: MinorUnits,
});
export type PricedLine = z.infer<typeof PricedLine>;

/** A (sku, quantity) pair, as inventory sees a line. */
export const StockLine = z.object({ sku: Sku, quantity: Quantity });
export type StockLine = z.infer<typeof StockLine>;
