import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { SagaTrackerConfig } from './config/saga-tracker.config';
import { DATABASE } from './database';
import { SagaModule } from './saga/saga.module';

/** The saga tracker service. */
@Module({})
export class AppModule {
  static register(config: SagaTrackerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          config,
          database: DATABASE,
          openApi: 'saga-tracker',
          consumers: { codePrefix: 'SAGA' },
        }),
        SagaModule.register(config),
      ],
    };
  }
}
