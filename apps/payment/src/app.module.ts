import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { PaymentConfig } from './config/payment.config';
import { DATABASE } from './database';
import { ApplyPspEventHandler } from './payment/commands/apply-psp-event/apply-psp-event.handler';
import { ChargePaymentHandler, ChargeWorker } from './payment/commands/charge-payment/charge-payment.handler';
import { MovePaymentHandler } from './payment/commands/move-payment/move-payment.handler';
import { PrunePspEventsHandler } from './payment/commands/prune-psp-events/prune-psp-events.handler';
import { ReconcilePaymentsHandler } from './payment/commands/reconcile-payments/reconcile-payments.handler';
import { RefundWorker, RequestRefundHandler } from './payment/commands/refund-payment/refund-payment.handler';
import { SettleRefundHandler } from './payment/commands/settle-refund/settle-refund.handler';
import { PaymentEventsConsumer } from './payment/consumers/payment-events.consumer';
import { PaymentsController } from './payment/http/payments.controller';
import { WebhooksController } from './payment/http/webhooks.controller';
import { PaymentMetrics } from './payment/payment.metrics';
import { PspClient } from './payment/psp/psp.client';

/** The payment service. */
@Module({})
export class AppModule {
  static register(config: PaymentConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'payment',
          aggregateType: 'payment',
          pspCredentials: true,
          consumers: { codePrefix: 'PAYMENT', batchSize: config.PAYMENT_ATTEMPT_BATCH_SIZE },
        }),
      ],
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [WebhooksController, PaymentsController, PaymentEventsConsumer],
      providers: [
        PaymentMetrics,
        PspClient,
        MovePaymentHandler,
        ChargePaymentHandler,
        ChargeWorker,
        RequestRefundHandler,
        SettleRefundHandler,
        RefundWorker,
        ReconcilePaymentsHandler,
        PrunePspEventsHandler,
        ApplyPspEventHandler,
      ],
    };
  }
}
