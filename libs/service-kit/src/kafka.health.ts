import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Admin } from 'kafkajs';
import { consumerStates, createKafka } from '@checkout/messaging';
import { SERVICE_CONFIG } from './tokens';
import { BaseConfig, kafkaClientOptions } from './config';

/**
 * The Kafka cluster as readiness reports it: whether a broker answers a metadata request within a second, and
 * the state of each consumer of the process. Always "up": Kafka is reported, it does not gate readiness.
 */
@Injectable()
export class KafkaHealthIndicator implements OnModuleDestroy {
  private admin?: Admin;

  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {}

  async report(key = 'kafka') {
    const indicator = this.health.check(key);
    const consumers = Object.fromEntries(consumerStates);
    try {
      if (!this.admin) {
        const { brokers, security } = kafkaClientOptions(this.config);
        this.admin = createKafka(brokers, `${this.config.SERVICE_NAME}-health`, security).admin();
        await this.admin.connect();
      }
      const cluster = await Promise.race([
        this.admin.describeCluster(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('kafka metadata timeout')), 1000),
        ),
      ]);
      return indicator.up({ reachable: true, brokers: cluster.brokers.length, consumers });
    } catch (error) {
      await this.admin?.disconnect().catch(() => undefined);
      this.admin = undefined;
      return indicator.up({ reachable: false, message: (error as Error).message, consumers });
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
