import { DynamicModule, Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { OrderConfig } from '../config/order.config';
import { GateModule } from '../gate/gate.module';
import { OrdersModule } from '../orders/orders.module';
import { CheckoutMetrics } from './checkout.metrics';
import { PlaceOrderHandler } from './commands/place-order/place-order.handler';
import { IdempotencyRepository } from './database/idempotency.repository';
import { CheckoutController } from './http/checkout.controller';
import { ExpireIdempotencyKeysJob } from './jobs/expire-idempotency-keys.job';

/** The checkout: POST /v1/checkouts, its Idempotency-Keys and their expiry. */
@Module({})
export class CheckoutModule {
  static register(config: OrderConfig): DynamicModule {
    return {
      module: CheckoutModule,
      imports: [GateModule, CatalogModule, OrdersModule],
      controllers: [CheckoutController],
      providers: [
        {
          provide: IdempotencyRepository,
          useValue: new IdempotencyRepository(config.IDEMPOTENCY_LEASE_MS, config.IDEMPOTENCY_KEY_TTL_HOURS),
        },
        CheckoutMetrics,
        PlaceOrderHandler,
        ExpireIdempotencyKeysJob,
      ],
    };
  }
}
