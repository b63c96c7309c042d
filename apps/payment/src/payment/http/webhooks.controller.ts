import { Body, Controller, Headers, HttpCode, Inject, Post, RawBodyRequest, Req } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { FastifyRequest } from 'fastify';
import { PspWebhookEvent, WebhookReceived } from '@checkout/contracts';
import { PspCredentialRegistry, SERVICE_CONFIG, validate } from '@checkout/service-kit';
import { PaymentConfig } from '../../config/payment.config';
import { WebhookRefused } from '../domain/payment.errors';
import { verifySignature } from '../domain/webhook-signature';
import { ApplyPspEventHandler } from '../commands/apply-psp-event/apply-psp-event.handler';
import { PaymentMetrics } from '../payment.metrics';
import { ReconcilePaymentsJob } from '../jobs/reconcile-payments.job';

// Checked against when the body names no account of ours, so that an unknown account costs the same HMAC as a
// known one: neither the answer nor its timing tells a caller which account ids exist.
const NO_SECRET = 'whsec_no_such_account_0000000000';

/**
 * Receives PSP webhooks: the signature first (every failure before it is verified is the same 401, whatever
 * the reason: no oracle for account ids or secrets), then one deduped transaction, then a quick 2xx.
 */
@Controller('v1/psp/webhooks')
export class WebhooksController {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: PaymentConfig,
    private readonly accounts: PspCredentialRegistry,
    private readonly apply: ApplyPspEventHandler,
    private readonly reconcile: ReconcilePaymentsJob,
    private readonly metrics: PaymentMetrics,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('Webhooks');
  }

  @Post()
  @HttpCode(200)
  async receive(
    @Req() req: RawBodyRequest<FastifyRequest>,
    @Headers('psp-signature') signature: string | undefined,
    @Body() body: unknown,
  ): Promise<WebhookReceived> {
    const raw = req.rawBody ?? Buffer.alloc(0);
    const account =
      typeof body === 'object' && body !== null ? (body as { account?: unknown }).account : undefined;
    // The account only says whose secret to check with; it is trusted once the signature matches.
    const credentials = typeof account === 'string' ? this.accounts.forAccount(account) : undefined;
    const problem = verifySignature(
      signature,
      raw,
      credentials?.webhookSecret ?? NO_SECRET,
      this.config.PAYMENT_WEBHOOK_TOLERANCE_S,
    );
    if (problem || !credentials || !req.rawBody) {
      this.metrics.webhooks.inc({ outcome: 'rejected' });
      // The reason stays in our log: the caller learns nothing but "refused".
      this.logger.warn({ reason: credentials ? problem : 'UNKNOWN_ACCOUNT' }, 'webhook refused');
      throw new WebhookRefused();
    }
    const event = validate(PspWebhookEvent, body);
    const { outcome, unaccountedCharge } = await this.apply.execute(credentials.tenantId, event);
    // Money the PSP took that no attempt of ours took: the orphan sweep looks once it is in its window.
    if (unaccountedCharge) this.reconcile.unaccountedChargeSeen();
    return { received: true, outcome };
  }
}
