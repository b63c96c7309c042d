import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext, NonRetryableError, lockSagas } from '@checkout/messaging';
import { PspCredentialRegistry } from '@checkout/service-kit';
import { insertAttempt } from '../../database/payment.repository';
import { ChargePaymentsJob } from '../../jobs/charge-payments.job';
import { storeCause } from '../move-payment/move-payment.handler';

/**
 * RecordAttempts: a chunk of inventory.reserved becomes one `created` attempt per order (none for an order already
 * cancelled), under each order's lock, in the consumer's transaction; the charge worker is woken once it commits.
 */
@Injectable()
export class RecordAttemptsHandler {
  constructor(
    private readonly accounts: PspCredentialRegistry,
    private readonly charges: ChargePaymentsJob,
  ) {}

  async execute(ctx: InboxContext, events: readonly SagaEvent<'inventory.reserved'>[]): Promise<void> {
    await lockSagas(
      ctx.tx,
      events.map((e) => ({ tenantId: e.tenantId, orderId: e.payload.orderId })),
    );
    for (const event of events) await ctx.eventScope(event, () => this.record(ctx, event));
    // The charge worker polls slowly while idle: the attempts just recorded are charged as soon as they commit.
    ctx.afterCommit(async () => this.charges.wake());
  }

  private async record(ctx: InboxContext, event: SagaEvent<'inventory.reserved'>): Promise<void> {
    const { tenantId, payload: p } = event;
    // The public account id is stored, never its secret key (the PSP client looks that up per call).
    const account = this.accounts.forTenant(tenantId);
    if (!account)
      throw new NonRetryableError(
        'PAYMENT.NO_PSP_ACCOUNT',
        `tenant ${tenantId} has no PSP account configured`,
      );
    await insertAttempt(ctx.tx, {
      id: randomUUID(),
      tenantId,
      orderId: p.orderId,
      amount: p.amount,
      currency: p.currency,
      paymentToken: p.paymentToken,
      pspAccount: account.accountId,
      cause: storeCause(event),
    });
  }
}
