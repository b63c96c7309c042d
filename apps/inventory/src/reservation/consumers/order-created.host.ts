import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { BatchEventConsumer, ConsumerLagMonitor, parseBrokers } from '@checkout/messaging';
import { METRICS_REGISTRY, PeriodicTask, TenantRegistry, messagingSettings } from '@checkout/service-kit';
import { withEventSpan } from '@checkout/tracing';
import { InventoryConfig } from '../../config/inventory.config';
import { ReserveStockBatch } from '../commands';
import { INVENTORY_CONFIG } from '../inventory.tokens';
import { onOrderCreated } from './order-created.consumer';

/**
 * Runs the batched order.created consumer (group commit of reservations) for the lifetime of the app. Its
 * inbox name is the service's, like the per-event consumer that handles every other topic, and on its first
 * start it continues from that consumer group's order.created offsets.
 */
@Injectable()
export class OrderCreatedConsumerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: BatchEventConsumer<'order.created'>;
  private lag?: { monitor: ConsumerLagMonitor; task: PeriodicTask };

  constructor(
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly logger: PinoLogger,
    private readonly dataSource: DataSource,
    private readonly tenants: TenantRegistry,
    private readonly reserve: ReserveStockBatch,
  ) {
    logger.setContext('OrderCreatedConsumerHost');
  }

  async onApplicationBootstrap(): Promise<void> {
    const name = this.config.SERVICE_NAME;
    this.consumer = new BatchEventConsumer({
      topic: 'order.created',
      groupId: `${name}-reservations`,
      inboxName: name,
      takeOverFrom: name,
      brokers: parseBrokers(this.config.KAFKA_BROKERS),
      dataSource: this.dataSource,
      batchSize: this.config.INVENTORY_RESERVE_BATCH_SIZE,
      logger: this.logger.logger,
      registry: this.registry,
      handler: onOrderCreated(this.tenants, this.reserve),
      // Like the per-event consumer: a consumer dead for good shuts the service down for a restart.
      onFatal: (reason) => {
        this.logger.fatal({ reason }, 'order.created batch consumer stopped for good; shutting down');
        process.exitCode = 1;
        process.kill(process.pid, 'SIGTERM');
      },
      // A chunk of one event runs in that event's consumer span; in a larger chunk each order's event carries
      // its order.created's traceparent, so every order's trace still continues through inventory.
      around: (events, fn) => (events.length === 1 ? withEventSpan(events[0], name, fn) : fn()),
    });
    await this.consumer.start();
    // The group's lag on order.created, next to the per-event consumer's gauges (messaging_consumer_lag).
    const monitor = new ConsumerLagMonitor({
      groupId: `${name}-reservations`,
      topics: ['order.created'],
      brokers: parseBrokers(this.config.KAFKA_BROKERS),
      registry: this.registry,
    });
    const interval = messagingSettings(this.config).probeIntervalMs;
    this.lag = {
      monitor,
      task: new PeriodicTask('reservations-lag', interval, () => monitor.probe(), this.logger.logger),
    };
    this.lag.task.start();
    this.logger.info(
      { batchSize: this.config.INVENTORY_RESERVE_BATCH_SIZE },
      'order.created batch consumer started',
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.lag?.task.stop();
    await this.lag?.monitor.close();
    await this.consumer?.stop();
  }
}
