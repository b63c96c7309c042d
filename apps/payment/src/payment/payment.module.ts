import { Module } from '@nestjs/common';
import { ApplyPspEventHandler } from './commands/apply-psp-event/apply-psp-event.handler';
import { ChargePaymentHandler } from './commands/charge-payment/charge-payment.handler';
import { MovePaymentHandler } from './commands/move-payment/move-payment.handler';
import { RequestRefundHandler } from './commands/request-refund/request-refund.handler';
import { SettleRefundHandler } from './commands/settle-refund/settle-refund.handler';
import { CancelPaymentHandler } from './commands/cancel-payment/cancel-payment.handler';
import { RecordAttemptsHandler } from './commands/record-attempts/record-attempts.handler';
import { PaymentEventsConsumer } from './consumers/payment-events.consumer';
import { PaymentsController } from './http/payments.controller';
import { WebhooksController } from './http/webhooks.controller';
import { ChargePaymentsJob } from './jobs/charge-payments.job';
import { PrunePspEventsJob } from './jobs/prune-psp-events.job';
import { ReconcilePaymentsJob } from './jobs/reconcile-payments.job';
import { RefundPaymentsJob } from './jobs/refund-payments.job';
import { PaymentMetrics } from './payment.metrics';
import { PspClient } from './psp/psp.client';

/** Payments and refunds: commands, the saga's consumer, the PSP webhooks and API, the charge and refund jobs. */
@Module({
  // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
  controllers: [WebhooksController, PaymentsController, PaymentEventsConsumer],
  providers: [
    PaymentMetrics,
    PspClient,
    MovePaymentHandler,
    ChargePaymentHandler,
    ChargePaymentsJob,
    RequestRefundHandler,
    RecordAttemptsHandler,
    CancelPaymentHandler,
    SettleRefundHandler,
    RefundPaymentsJob,
    ReconcilePaymentsJob,
    PrunePspEventsJob,
    ApplyPspEventHandler,
  ],
})
export class PaymentModule {}
