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
import { BackgroundStart, LagWatch, shutdownOnFatal } from './consumer-lifecycle';
import { EVENT_HANDLERS, METRICS_REGISTRY, SERVICE_CONFIG } from './tokens';

/**
 * Runs the service's event consumer for the lifetime of the app; SIGTERM drains it before the DB closes. The
 * group join happens in the background (BackgroundStart): the HTTP port does not wait for Kafka.
 * A service lists it in its module's providers next to `{ provide: EVENT_HANDLERS, useFactory, inject }`.
 */
@Injectable()
export class ConsumerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: EventConsumer;
  private lag?: LagWatch;
  private starter?: BackgroundStart;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly logger: PinoLogger,
    @Optional() private readonly dataSource?: DataSource,
    @Optional() @Inject(EVENT_HANDLERS) private readonly handlers?: HandlerMap,
  ) {
    logger.setContext('ConsumerHost');
  }

  onApplicationBootstrap(): void {
    if (!this.handlers || !this.dataSource || Object.keys(this.handlers).length === 0) return;
    const dataSource = this.dataSource;
    const handlers = this.handlers;
    this.starter = new BackgroundStart(
      this.config.SERVICE_NAME,
      this.logger,
      async () => {
        const consumer = new EventConsumer({
          name: this.config.SERVICE_NAME,
          ...kafkaClientOptions(this.config),
          dataSource,
          handlers,
          registry: this.registry,
          logger: this.logger.logger,
          around: (event, fn) => withEventSpan(event, this.config.SERVICE_NAME, fn),
          onFatal: shutdownOnFatal(this.logger, 'consumer'),
        });
        this.consumer = consumer;
        await consumer.start();
        if (this.starter?.isStopped) return;
        this.logger.info({ topics: consumer.topics }, 'consumer started');
        this.lag = new LagWatch(
          this.config,
          this.registry,
          this.logger,
          this.config.SERVICE_NAME,
          consumer.topics,
        );
      },
      async () => {
        await this.consumer?.stop();
        this.consumer = undefined;
      },
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.starter?.stop();
    await this.lag?.stop();
    await this.consumer?.stop();
    this.logger.info('consumer stopped');
  }
}
