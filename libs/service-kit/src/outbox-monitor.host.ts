import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { OutboxMonitor } from '@checkout/messaging';
import { BaseConfig, messagingSettings } from './config';
import { PeriodicTask } from './periodic';
import { HAS_OUTBOX, METRICS_REGISTRY, SERVICE_CONFIG } from './tokens';

/**
 * Messaging retention (inbox rows, and relay-confirmed outbox rows) for a service with a database that publishes
 * or consumes; the outbox gauges (read from the database when /metrics is scraped) only for one that publishes.
 */
@Injectable()
export class OutboxMonitorHost implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly monitor: OutboxMonitor;
  private readonly retention: PeriodicTask;

  constructor(
    @Inject(SERVICE_CONFIG) config: BaseConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(HAS_OUTBOX) hasOutbox: boolean,
    dataSource: DataSource,
    logger: PinoLogger,
  ) {
    logger.setContext('OutboxMonitor');
    const log = logger.logger;
    const settings = messagingSettings(config);
    this.monitor = new OutboxMonitor({
      dataSource,
      slotName: hasOutbox ? settings.slotName : undefined,
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
