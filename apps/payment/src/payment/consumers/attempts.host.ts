import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import {
  BatchConsumerRunner,
  METRICS_REGISTRY,
  PspCredentialRegistry,
  SERVICE_CONFIG,
  TenantRegistry,
} from '@checkout/service-kit';
import { withEventSpan } from '@checkout/tracing';
import { PaymentConfig } from '../../config/payment.config';
import { recordAttempts } from './payment-events.consumer';

/**
 * Consumes inventory.reserved in batches (group `payment-attempts`): a chunk of events records its attempts in
 * one transaction, each event's statements inside that event's consumer span, so every checkout's trace still
 * shows payment's writes. A flash sale's burst of reservations no longer waits one transaction per event.
 */
@Injectable()
export class AttemptsConsumerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly runner: BatchConsumerRunner<'inventory.reserved'>;

  constructor(
    @Inject(SERVICE_CONFIG) config: PaymentConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    logger: PinoLogger,
    dataSource: DataSource,
    tenants: TenantRegistry,
    accounts: PspCredentialRegistry,
  ) {
    logger.setContext('AttemptsConsumerHost');
    const name = config.SERVICE_NAME;
    this.runner = new BatchConsumerRunner(config, registry, logger, dataSource, {
      topic: 'inventory.reserved',
      purpose: 'attempts',
      batchSize: config.PAYMENT_ATTEMPT_BATCH_SIZE,
      handler: recordAttempts(tenants, accounts, (event, fn) => withEventSpan(event, name, fn)),
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.runner.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.runner.stop();
  }
}
