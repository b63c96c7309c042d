import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { PaymentConfig } from './config/payment.config';
import { DATABASE } from './database';
import { PaymentModule } from './payment/payment.module';

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
        PaymentModule,
      ],
    };
  }
}
