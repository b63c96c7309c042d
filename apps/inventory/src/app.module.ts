import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { InventoryConfig } from './config/inventory.config';
import { DATABASE } from './database';
import { ReservationModule } from './reservation/reservation.module';

/** The inventory service. */
@Module({})
export class AppModule {
  static register(config: InventoryConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'inventory',
          aggregateType: 'inventory',
          consumers: {
            codePrefix: 'INVENTORY',
            batchSize: config.INVENTORY_RESERVE_BATCH_SIZE,
          },
        }),
        ReservationModule,
      ],
    };
  }
}
