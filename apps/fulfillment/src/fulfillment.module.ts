import { DynamicModule, Module } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { METRICS_REGISTRY, OUTBOX_WRITER } from '@checkout/service-kit';
import { FulfillmentConfig } from './config/fulfillment.config';
import { FulfillmentMetrics } from './fulfillment.metrics';
import { LogTransport, RecordNotification, SendNotifications } from './notifications/commands';
import { NotificationsConsumer } from './notifications/consumers/notifications.consumer';
import { NotificationsController } from './notifications/http/notifications.controller';
import { NotifierJob } from './notifications/jobs/notifier.job';
import { CancelShipment, CreateShipment } from './shipping/commands';
import { ShippingConsumer } from './shipping/consumers/shipping.consumer';
import { ShipmentsController } from './shipping/http/shipments.controller';

/** How long the notifier holds a claimed notification before another pass may take it again. */
const NOTIFIER_LEASE_MS = 30_000;

/** Shipments and customer notifications: commands, consumers, the notifier step and the HTTP API. */
@Module({})
export class FulfillmentModule {
  static register(config: FulfillmentConfig): DynamicModule {
    return {
      module: FulfillmentModule,
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [ShipmentsController, NotificationsController, ShippingConsumer, NotificationsConsumer],
      providers: [
        {
          provide: CreateShipment,
          useFactory: (outbox: OutboxWriter) =>
            new CreateShipment(outbox, {
              carrier: config.CARRIER_NAME,
              failSkus: config.CARRIER_FAIL_SKUS,
              failCustomers: config.CARRIER_FAIL_CUSTOMERS,
            }),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: CancelShipment,
          useFactory: (outbox: OutboxWriter) => new CancelShipment(outbox),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: RecordNotification,
          useFactory: (outbox: OutboxWriter) =>
            new RecordNotification({ apologyPercentOff: config.APOLOGY_VOUCHER_PERCENT_OFF }, outbox),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: FulfillmentMetrics,
          useFactory: (registry: Registry, ds: DataSource) => new FulfillmentMetrics(registry, ds),
          inject: [METRICS_REGISTRY, DataSource],
        },
        {
          provide: SendNotifications,
          useFactory: (ds: DataSource, logger: PinoLogger) =>
            new SendNotifications(ds, new LogTransport((fields, msg) => logger.info(fields, msg)), {
              batchSize: config.NOTIFIER_BATCH_SIZE,
              leaseMs: NOTIFIER_LEASE_MS,
            }),
          inject: [DataSource, PinoLogger],
        },
        {
          provide: NotifierJob,
          useFactory: (send: SendNotifications, metrics: FulfillmentMetrics, logger: PinoLogger) =>
            new NotifierJob(
              send,
              metrics,
              logger,
              config.NOTIFIER_INTERVAL_MS,
              config.NOTIFIER_IDLE_INTERVAL_MS,
            ),
          inject: [SendNotifications, FulfillmentMetrics, PinoLogger],
        },
      ],
    };
  }
}
