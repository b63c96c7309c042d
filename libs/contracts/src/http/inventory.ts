import { z } from 'zod';
import { Sku } from '../primitives';
import { ServiceApi } from './api';
import { Count, SkuParam } from './common';

/** Largest stock count accepted for one SKU: anything above is a typo, not a warehouse. */
export const MAX_AVAILABLE = 100_000_000;

/** Longest reservation TTL a SKU may have: one day, like INVENTORY_RESERVATION_TTL_SECONDS. */
export const MAX_RESERVATION_TTL_SECONDS = 86_400;

/** Body of `PUT /v1/admin/stock/{sku}`. */
export const SetStockRequest = z
  .strictObject({
    available: z.number().int().min(0).max(MAX_AVAILABLE),
    allowBackorder: z.boolean().optional(),
    reservationTtlSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_RESERVATION_TTL_SECONDS)
      .nullable()
      .optional()
      .meta({ description: 'Omitted: unchanged; null: back to the service default.' }),
  })
  .meta({ id: 'SetStockRequest' });
export type SetStockRequest = z.infer<typeof SetStockRequest>;

/** `GET /v1/stock/{sku}`; per SKU, initial + restocks = available + reserved + sold. */
export const StockView = z
  .object({
    sku: Sku,
    available: Count,
    reserved: Count,
    sold: Count,
    reservationTtlSeconds: z
      .number()
      .int()
      .positive()
      .nullable()
      .meta({ description: "This SKU's reservation TTL in seconds; null follows the service default." }),
  })
  .meta({ id: 'StockView' });
export type StockView = z.infer<typeof StockView>;

/** 200 of `PUT /v1/admin/stock/{sku}`: the stock view and the backorder flag. */
export const StockSetView = StockView.extend({ allowBackorder: z.boolean() }).meta({ id: 'StockSetView' });
export type StockSetView = z.infer<typeof StockSetView>;

/** The inventory service's public API: stock per SKU, read and set. */
export const INVENTORY_API: ServiceApi = {
  service: 'inventory',
  title: 'checkout-saga inventory API',
  description:
    "Stock per SKU of the caller's tenant: available, reserved (held between order and payment) and sold. Errors as { error, message, ...details } (docs/api.md).",
  database: true,
  endpoints: [
    {
      method: 'put',
      path: '/v1/admin/stock/{sku}',
      summary:
        'Sets the on-hand available units (the difference is recorded as a restock) and the backorder flag.',
      params: SkuParam,
      body: SetStockRequest,
      ok: { status: 200, description: 'The stock now.', schema: StockSetView },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'get',
      path: '/v1/stock/{sku}',
      summary: 'Stock of one SKU; holds past their TTL count as available.',
      params: SkuParam,
      ok: { status: 200, description: 'The stock.', schema: StockView },
      errors: ['VALIDATION_FAILED', 'UNKNOWN_SKU'],
    },
  ],
};
