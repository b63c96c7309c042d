import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Admin } from 'kafkajs';
import { createKafka } from '@checkout/messaging';
import { SERVICE_CONFIG } from './tokens';
import { BaseConfig, kafkaClientOptions } from './config';

/** Readiness of the Kafka cluster: the broker answers a metadata request within a second. */
@Injectable()
export class KafkaHealthIndicator implements OnModuleDestroy {
  private admin?: Admin;

  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {}

  async check(key = 'kafka') {
    const indicator = this.health.check(key);
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
      return indicator.up({ brokers: cluster.brokers.length });
    } catch (error) {
      await this.admin?.disconnect().catch(() => undefined);
      this.admin = undefined;
      return indicator.down({ message: (error as Error).message });
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
