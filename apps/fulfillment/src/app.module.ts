import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { FulfillmentConfig } from './config/fulfillment.config';
import { DATABASE } from './database';
import { NotificationsModule } from './notifications/notifications.module';
import { ShippingModule } from './shipping/shipping.module';

/** The fulfillment service. */
@Module({})
export class AppModule {
  static register(config: FulfillmentConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'fulfillment',
          aggregateType: 'fulfillment',
          consumers: { codePrefix: 'FULFILLMENT' },
        }),
        ShippingModule,
        NotificationsModule,
      ],
    };
  }
}
