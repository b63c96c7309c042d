import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { OrderConfig } from './config/order.config';
import { DATABASE } from './database';

/** The order service. */
@Module({})
export class AppModule {
  static register(config: OrderConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ServiceKitModule.forRoot({ config, database: DATABASE, aggregateType: 'order' })],
    };
  }
}
