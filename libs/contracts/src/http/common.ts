import { z } from 'zod';
import { MinorUnits, OrderId, Sku, Timestamp } from '../primitives';

/** A SKU in a path (`/v1/stock/{sku}`). */
export const SkuParam = z.object({ sku: Sku.meta({ description: 'The SKU, 1..64 of [A-Za-z0-9._-].' }) });

/** An order id in a path (`/v1/orders/{orderId}`). */
export const OrderIdParam = z.object({ orderId: OrderId.meta({ description: 'The order (and saga) id.' }) });

/** `?orderId=` of the per-order lists (payments, shipments, notifications). */
export const OrderQuery = z.strictObject({ orderId: OrderId });

/** An instant as the APIs answer it: ISO 8601 with offset. */
export const Instant = Timestamp;

/** A count that never goes below zero (stock units, attempts). */
export const Count = z.number().int().nonnegative();

/** An amount of money in minor units, with its ISO currency next to it. */
export const Money = MinorUnits;
