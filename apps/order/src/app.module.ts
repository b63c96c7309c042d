import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { CatalogModule } from './catalog/catalog.module';
import { CheckoutModule } from './checkout/checkout.module';
import { OrderConfig } from './config/order.config';
import { DATABASE } from './database';
import { GateModule } from './gate/gate.module';
import { OrdersModule } from './orders/orders.module';

/** The order service. */
@Module({})
export class AppModule {
  static register(config: OrderConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'order',
          aggregateType: 'order',
          consumers: { codePrefix: 'ORDER' },
        }),
        GateModule,
        CatalogModule,
        CheckoutModule.register(config),
        OrdersModule,
      ],
    };
  }
}
