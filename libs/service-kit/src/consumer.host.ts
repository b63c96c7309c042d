import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { EventConsumer, HandlerMap } from '@checkout/messaging';
import { withEventSpan } from '@checkout/tracing';
import { BaseConfig, kafkaClientOptions } from './config';
import { LagWatch, shutdownOnFatal } from './consumer-lifecycle';
import { EVENT_HANDLERS, METRICS_REGISTRY, SERVICE_CONFIG } from './tokens';

/**
 * Runs the service's event consumer for the lifetime of the app; SIGTERM drains it before the DB closes.
 * A service lists it in its module's providers next to `{ provide: EVENT_HANDLERS, useFactory, inject }`.
 */
@Injectable()
export class ConsumerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: EventConsumer;
  private lag?: LagWatch;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly logger: PinoLogger,
    @Optional() private readonly dataSource?: DataSource,
    @Optional() @Inject(EVENT_HANDLERS) private readonly handlers?: HandlerMap,
  ) {
    logger.setContext('ConsumerHost');
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.handlers || !this.dataSource || Object.keys(this.handlers).length === 0) return;
    this.consumer = new EventConsumer({
      name: this.config.SERVICE_NAME,
      ...kafkaClientOptions(this.config),
      dataSource: this.dataSource,
      handlers: this.handlers,
      registry: this.registry,
      logger: this.logger.logger,
      around: (event, fn) => withEventSpan(event, this.config.SERVICE_NAME, fn),
      onFatal: shutdownOnFatal(this.logger, 'consumer'),
    });
    await this.consumer.start();
    this.logger.info({ topics: this.consumer.topics }, 'consumer started');
    this.lag = new LagWatch(
      this.config,
      this.registry,
      this.logger,
      this.config.SERVICE_NAME,
      this.consumer.topics,
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.lag?.stop();
    await this.consumer?.stop();
    this.logger.info('consumer stopped');
  }
}
