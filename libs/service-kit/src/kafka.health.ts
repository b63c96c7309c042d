import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Admin } from 'kafkajs';
import { consumerStates, createKafka } from '@checkout/messaging';
import { SERVICE_CONFIG } from './tokens';
import { BaseConfig, kafkaClientOptions } from './config';

/**
 * The Kafka cluster as readiness reports it: whether a broker answers a metadata request within a second, and
 * the state of each consumer of the process. Always "up": Kafka is reported, it does not gate readiness, and a
 * dead or black-holed broker never holds the probe past REPORT_BUDGET_MS.
 */
/** How long readiness waits for Kafka's answer: well inside the probe's timeout (3 s in the manifests). */
const REPORT_BUDGET_MS = 1_000;

@Injectable()
export class KafkaHealthIndicator implements OnModuleDestroy {
  private admin?: Admin;
  private looking?: Promise<number>;

  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {}

  async report(key = 'kafka') {
    const indicator = this.health.check(key);
    const consumers = Object.fromEntries(consumerStates);
    // One look at the cluster at a time, and never longer than the budget: a probe arriving while the previous
    // look still waits on a dead broker shares it instead of piling up connections.
    this.looking ??= this.describe().finally(() => (this.looking = undefined));
    let timer: NodeJS.Timeout | undefined;
    try {
      const brokers = await Promise.race([
        this.looking,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('kafka metadata timeout')), REPORT_BUDGET_MS);
        }),
      ]);
      return indicator.up({ reachable: true, brokers, consumers });
    } catch (error) {
      return indicator.up({ reachable: false, message: (error as Error).message, consumers });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The number of brokers in the cluster's metadata; one connection attempt, no retries (the next probe retries). */
  private async describe(): Promise<number> {
    try {
      if (!this.admin) {
        const { brokers, security } = kafkaClientOptions(this.config);
        this.admin = createKafka(brokers, `${this.config.SERVICE_NAME}-health`, security).admin({
          retry: { retries: 0 },
        });
        await this.admin.connect();
      }
      return (await this.admin.describeCluster()).brokers.length;
    } catch (error) {
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
