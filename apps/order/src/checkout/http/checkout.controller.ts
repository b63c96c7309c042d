import { Body, Controller, Headers, Post, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { CheckoutRequest, IdempotencyKey } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { PlaceOrderHandler } from '../commands/place-order/place-order.handler';
import { IdempotencyKeyRequired } from '../domain/checkout.errors';

/** `POST /v1/checkout` (contract: CheckoutRequest, CheckoutAccepted in libs/contracts, docs/api.md). */
@Controller('v1/checkout')
@UseGuards(TenantGuard)
export class CheckoutController {
  constructor(private readonly placeOrder: PlaceOrderHandler) {}

  @Post()
  async checkout(
    @CurrentTenant() tenant: Tenant,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res() res: FastifyReply,
  ): Promise<void> {
    let idempotencyKey: string;
    let parsed: CheckoutRequest;
    try {
      if (key === undefined) {
        throw new IdempotencyKeyRequired();
      }
      idempotencyKey = validate(IdempotencyKey, key, 'Idempotency-Key header');
      parsed = validate(CheckoutRequest, body);
    } catch (error) {
      this.placeOrder.count('VALIDATION_FAILED');
      throw error;
    }
    const reply = await this.placeOrder.execute({ tenantId: tenant.id, idempotencyKey, body: parsed });
    if (reply.replayed) void res.header('Idempotent-Replayed', 'true');
    // The stored bytes, not a re-serialisation: a replay is byte for byte the first answer.
    void res.code(reply.status).type('application/json; charset=utf-8').send(reply.body);
  }
}
