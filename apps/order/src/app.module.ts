import { DynamicModule, Module } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { OutboxWriter } from '@checkout/messaging';
import {
  ConsumerHost,
  EVENT_HANDLERS,
  OUTBOX_WRITER,
  ServiceKitModule,
  TenantRegistry,
} from '@checkout/service-kit';
import { SetFlashSaleHandler } from './catalog/commands/enable-flash-sale/enable-flash-sale.handler';
import { CatalogRepository } from './catalog/database/catalog.repository';
import { AdminController } from './catalog/http/admin.controller';
import { RearmFlashSaleGatesJob } from './catalog/jobs/rearm-flash-sale-gates.job';
import { ExpireIdempotencyKeysJob } from './checkout/commands/expire-idempotency-keys/expire-idempotency-keys.job';
import {
  IDEMPOTENCY_REPOSITORY,
  PlaceOrderHandler,
} from './checkout/commands/place-order/place-order.handler';
import { IdempotencyRepository } from './checkout/database/idempotency.repository';
import { CheckoutController } from './checkout/http/checkout.controller';
import { OrderConfig } from './config/order.config';
import { DATABASE } from './database';
import { OrderStockGate } from './gate/stock-gate.provider';
import { CancelOrderHandler } from './orders/commands/cancel-order/cancel-order.handler';
import { orderSagaHandlers } from './orders/consumers/saga-events.consumer';
import { OrderRepository } from './orders/database/order.repository';
import { OrdersController } from './orders/http/orders.controller';

/** The order service. */
@Module({})
export class AppModule {
  static register(config: OrderConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ServiceKitModule.forRoot({ config, database: DATABASE, aggregateType: 'order' })],
      controllers: [CheckoutController, OrdersController, AdminController],
      providers: [
        { provide: OrderRepository, useValue: new OrderRepository() },
        { provide: CatalogRepository, useValue: new CatalogRepository() },
        {
          provide: IDEMPOTENCY_REPOSITORY,
          useValue: new IdempotencyRepository(config.IDEMPOTENCY_LEASE_MS, config.IDEMPOTENCY_KEY_TTL_HOURS),
        },
        OrderStockGate,
        PlaceOrderHandler,
        CancelOrderHandler,
        SetFlashSaleHandler,
        ExpireIdempotencyKeysJob,
        RearmFlashSaleGatesJob,
        ConsumerHost,
        {
          provide: EVENT_HANDLERS,
          useFactory: (
            orders: OrderRepository,
            catalog: CatalogRepository,
            outbox: OutboxWriter,
            gate: OrderStockGate,
            tenants: TenantRegistry,
            logger: PinoLogger,
          ) => orderSagaHandlers({ orders, catalog, outbox, gate, tenants, logger: logger.logger }),
          inject: [
            OrderRepository,
            CatalogRepository,
            OUTBOX_WRITER,
            OrderStockGate,
            TenantRegistry,
            PinoLogger,
          ],
        },
      ],
    };
  }
}
