import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { BatchConsumerRunner, METRICS_REGISTRY, TenantRegistry } from '@checkout/service-kit';
import { withEventSpan } from '@checkout/tracing';
import { InventoryConfig } from '../../config/inventory.config';
import { ReserveStockBatch } from '../commands';
import { INVENTORY_CONFIG } from '../inventory.tokens';
import { onOrderCreated } from './order-created.consumer';

/**
 * Runs the batched order.created consumer (group commit of reservations, group `inventory-reservations`) for
 * the lifetime of the app.
 */
@Injectable()
export class OrderCreatedConsumerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly runner: BatchConsumerRunner<'order.created'>;

  constructor(
    @Inject(INVENTORY_CONFIG) config: InventoryConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    logger: PinoLogger,
    dataSource: DataSource,
    tenants: TenantRegistry,
    reserve: ReserveStockBatch,
  ) {
    logger.setContext('OrderCreatedConsumerHost');
    const name = config.SERVICE_NAME;
    this.runner = new BatchConsumerRunner(config, registry, logger, dataSource, {
      topic: 'order.created',
      purpose: 'reservations',
      batchSize: config.INVENTORY_RESERVE_BATCH_SIZE,
      handler: onOrderCreated(tenants, reserve),
      // A chunk of one event runs in that event's consumer span; in a larger chunk each order's event carries
      // its order.created's traceparent, so every order's trace still continues through inventory.
      around: (events, fn) => (events.length === 1 ? withEventSpan(events[0], name, fn) : fn()),
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.runner.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.runner.stop();
  }
}
