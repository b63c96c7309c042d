import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { ConsumerLagMonitor } from '@checkout/messaging';
import { BaseConfig, kafkaClientOptions, messagingSettings } from './config';
import { PeriodicTask } from './periodic';

/**
 * What a consumer that died for good does: no live-looking pod without a consumer; shut down and let the
 * orchestrator restart it.
 */
export const shutdownOnFatal =
  (logger: PinoLogger, what: string) =>
  (reason: string): void => {
    logger.fatal({ reason }, `${what} stopped for good; shutting down`);
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  };

/** Keeps a consumer group's lag and DLQ gauges fresh (messaging_consumer_lag, messaging_dlq_messages). */
export class LagWatch {
  private readonly monitor: ConsumerLagMonitor;
  private readonly task: PeriodicTask;

  constructor(config: BaseConfig, registry: Registry, logger: PinoLogger, groupId: string, topics: string[]) {
    const monitor = new ConsumerLagMonitor({ groupId, topics, ...kafkaClientOptions(config), registry });
    this.monitor = monitor;
    this.task = new PeriodicTask(
      `${groupId}-lag`,
      messagingSettings(config).probeIntervalMs,
      () => monitor.probe(),
      logger.logger,
    );
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    await this.monitor.close();
  }
}
