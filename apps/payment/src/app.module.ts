import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { PaymentConfig } from './config/payment.config';
import { DATABASE } from './database';

/** The payment service. */
@Module({})
export class AppModule {
  static register(config: PaymentConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ServiceKitModule.forRoot({ config, database: DATABASE, aggregateType: 'payment' })],
    };
  }
}
