import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { EventType, SagaEvent } from '@checkout/contracts';
import { BatchEventConsumer, BatchEventHandler } from '@checkout/messaging';
import { BaseConfig, kafkaClientOptions } from './config';
import { BackgroundStart, LagWatch, shutdownOnFatal } from './consumer-lifecycle';

/** What a service says about one hot topic it consumes in batches (group commit). */
export interface BatchConsumerSpec<T extends EventType> {
  topic: T;
  /** Names the consumer group `<service>-<purpose>`, e.g. `inventory-reservations`. */
  purpose: string;
  batchSize: number;
  handler: BatchEventHandler<T>;
  around?: <R>(events: SagaEvent<T>[], fn: () => Promise<R>) => Promise<R>;
}

/**
 * Runs a BatchEventConsumer the way ConsumerHost runs the per-event one: the inbox name is the service's (an
 * event either consumer applied is a duplicate for the other), on its first start the group continues from the
 * service's per-event group offsets, a consumer dead for good shuts the service down for a restart, and its
 * lag is on /metrics. The group join happens in the background (BackgroundStart): start() returns at once.
 */
export class BatchConsumerRunner<T extends EventType> {
  private consumer?: BatchEventConsumer<T>;
  private lag?: LagWatch;
  private starter?: BackgroundStart;

  constructor(
    private readonly config: BaseConfig,
    private readonly registry: Registry,
    private readonly logger: PinoLogger,
    private readonly dataSource: DataSource,
    private readonly spec: BatchConsumerSpec<T>,
  ) {}

  start(): Promise<void> {
    const name = this.config.SERVICE_NAME;
    const groupId = `${name}-${this.spec.purpose}`;
    this.starter = new BackgroundStart(
      groupId,
      this.logger,
      async () => {
        const consumer = new BatchEventConsumer({
          topic: this.spec.topic,
          groupId,
          inboxName: name,
          takeOverFrom: name,
          ...kafkaClientOptions(this.config),
          dataSource: this.dataSource,
          batchSize: this.spec.batchSize,
          logger: this.logger.logger,
          registry: this.registry,
          handler: this.spec.handler,
          around: this.spec.around,
          onFatal: shutdownOnFatal(this.logger, `batch consumer ${groupId}`),
        });
        this.consumer = consumer;
        await consumer.start();
        if (this.starter?.isStopped) return;
        this.lag = new LagWatch(this.config, this.registry, this.logger, groupId, [this.spec.topic]);
        this.logger.info(
          { groupId, topic: this.spec.topic, batchSize: this.spec.batchSize },
          'batch consumer started',
        );
      },
      async () => {
        await this.consumer?.stop();
        this.consumer = undefined;
      },
    );
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.starter?.stop();
    await this.lag?.stop();
    await this.consumer?.stop();
  }
}
