import { Body, Controller, Headers, HttpCode, Inject, Post, RawBodyRequest, Req } from '@nestjs/common';
import { Request } from 'express';
import { ApiError, SERVICE_CONFIG, TenantRegistry, validate } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import { verifySignature } from '../domain/webhook-signature';
import { ApplyPspEventHandler, PspEventSchema } from '../commands/apply-psp-event/apply-psp-event.handler';
import { PaymentMetrics } from '../payment.metrics';

/** Receives PSP webhooks: signature first, then one deduped transaction, then a quick 2xx. */
@Controller('v1/psp/webhooks')
export class WebhooksController {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly tenants: TenantRegistry,
    private readonly apply: ApplyPspEventHandler,
    private readonly metrics: PaymentMetrics,
  ) {}

  @Post()
  @HttpCode(200)
  async receive(
    @Req() req: RawBodyRequest<Request>,
    @Headers('psp-signature') signature: string | undefined,
    @Body() body: unknown,
  ) {
    const raw = req.rawBody;
    if (!raw || typeof body !== 'object' || body === null) {
      this.metrics.webhooks.inc({ outcome: 'rejected' });
      throw new ApiError(400, 'MALFORMED_BODY', 'a JSON webhook event is required');
    }
    const account = (body as { account?: unknown }).account;
    // The account names whose secret to check with; it is trusted only once the signature matches.
    const tenant =
      typeof account === 'string' ? this.tenants.all().find((t) => t.pspAccount === account) : undefined;
    const problem = tenant
      ? verifySignature(signature, raw, tenant.webhookSecret, this.config.PAYMENT_WEBHOOK_TOLERANCE_S)
      : 'UNKNOWN_ACCOUNT';
    if (problem || !tenant) {
      this.metrics.webhooks.inc({ outcome: 'rejected' });
      throw new ApiError(401, 'WEBHOOK_UNAUTHENTICATED', `webhook refused: ${problem}`);
    }
    const event = validate(PspEventSchema, body);
    const outcome = await this.apply.execute(tenant.id, event);
    return { received: true, outcome };
  }
}
