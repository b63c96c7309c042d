import { Body, Controller, Headers, Post, Res, UseGuards } from '@nestjs/common';
import { Response } from 'express';
import { z } from 'zod';
import { Currency, ExternalId, MinorUnits, Quantity, Sku, VoucherCode } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { PlaceOrderHandler } from '../commands/place-order/place-order.handler';
import { IdempotencyKeyRequired } from '../domain/checkout.errors';

/** Idempotency-Key: client-chosen, 1..255 visible ASCII characters. */
const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1..255 visible ASCII characters');

/** The checkout body of PRODUCT.md section 4. */
export const CheckoutBody = z.object({
  customerId: ExternalId(128, 'customerId'),
  currency: Currency,
  lines: z
    .array(z.object({ sku: Sku, quantity: Quantity, unitPrice: MinorUnits.optional() }))
    .min(1)
    .max(100)
    .refine(
      (lines) => new Set(lines.map((l) => l.sku)).size === lines.length,
      'each SKU may appear on one line only',
    ),
  voucherCode: VoucherCode.optional(),
  payment: z.object({ token: ExternalId(128, 'payment.token') }),
});

/** `POST /v1/checkout`: 202 with the order id; retries with the same Idempotency-Key are replayed. */
@Controller('v1/checkout')
@UseGuards(TenantGuard)
export class CheckoutController {
  constructor(private readonly placeOrder: PlaceOrderHandler) {}

  @Post()
  async checkout(
    @CurrentTenant() tenant: Tenant,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res() res: Response,
  ): Promise<void> {
    let idempotencyKey: string;
    let parsed: z.infer<typeof CheckoutBody>;
    try {
      if (key === undefined) {
        throw new IdempotencyKeyRequired();
      }
      idempotencyKey = validate(IdempotencyKey, key, 'Idempotency-Key header');
      parsed = validate(CheckoutBody, body);
    } catch (error) {
      this.placeOrder.count('VALIDATION_FAILED');
      throw error;
    }
    const reply = await this.placeOrder.execute({ tenantId: tenant.id, idempotencyKey, body: parsed });
    if (reply.replayed) res.setHeader('Idempotent-Replayed', 'true');
    // The stored bytes, not a re-serialisation: a replay is byte for byte the first answer.
    res.status(reply.status).type('application/json').send(reply.body);
  }
}
