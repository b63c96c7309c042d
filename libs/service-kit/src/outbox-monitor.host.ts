import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { OutboxMonitor } from '@checkout/messaging';
import { BaseConfig, messagingSettings } from './config';
import { PeriodicTask } from './periodic';
import { METRICS_REGISTRY, SERVICE_CONFIG } from './tokens';

/**
 * The outbox gauges (read from the database when /metrics is scraped) and messaging retention, for a service that
 * publishes through an outbox.
 */
@Injectable()
export class OutboxMonitorHost implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly monitor: OutboxMonitor;
  private readonly retention: PeriodicTask;

  constructor(
    @Inject(SERVICE_CONFIG) config: BaseConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    dataSource: DataSource,
    logger: PinoLogger,
  ) {
    logger.setContext('OutboxMonitor');
    const log = logger.logger;
    const settings = messagingSettings(config);
    this.monitor = new OutboxMonitor({
      dataSource,
      slotName: settings.slotName,
      registry,
      probeMaxAgeMs: settings.probeIntervalMs,
      logger: log,
      retention: {
        outboxMs: settings.outboxRetentionMs,
        inboxMs: settings.inboxRetentionMs,
        batchSize: 1_000,
        maxBatches: 20,
      },
    });
    this.retention = new PeriodicTask(
      'messaging-retention',
      settings.retentionIntervalMs,
      () => this.monitor.prune(),
      log,
    );
  }

  onApplicationBootstrap(): void {
    this.retention.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.retention.stop();
  }
}
