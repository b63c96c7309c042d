import { DynamicModule, Module } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { createKafka } from '@checkout/messaging';
import { METRICS_REGISTRY, TenantRegistry, kafkaClientOptions } from '@checkout/service-kit';
import { TRACKED_TYPES } from './domain';
import { ReadHorizon } from './jobs/read-horizon';
import { SagaTrackerConfig, stuckTimeoutsOf } from '../config/saga-tracker.config';
import { RecordSagaStep } from './commands/record-step/record-step.handler';
import { SweepStuckSagas } from './commands/sweep-stuck/sweep-stuck.handler';
import { SagaEventsConsumer } from './consumers/saga-events.consumer';
import { STUCK_TIMEOUTS, SagasController } from './http/sagas.controller';
import { TimelinePageController } from './http/timeline-page.controller';
import { StuckSweepJob } from './jobs/stuck-sweep.job';
import { SagaMetrics } from './saga.metrics';

/** The saga timeline: the consumer of every saga topic, the stuck sweep, the API and the timeline page. */
@Module({})
export class SagaModule {
  static register(config: SagaTrackerConfig): DynamicModule {
    const timeouts = stuckTimeoutsOf(config);
    return {
      module: SagaModule,
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [SagasController, TimelinePageController, SagaEventsConsumer],
      providers: [
        { provide: STUCK_TIMEOUTS, useValue: timeouts },
        {
          provide: SagaMetrics,
          useFactory: (registry: Registry, ds: DataSource, tenants: TenantRegistry) =>
            new SagaMetrics(registry, ds, tenants),
          inject: [METRICS_REGISTRY, DataSource, TenantRegistry],
        },
        { provide: RecordSagaStep, useValue: new RecordSagaStep(timeouts) },
        {
          provide: SweepStuckSagas,
          useFactory: (ds: DataSource, metrics: SagaMetrics, logger: PinoLogger) => {
            logger.setContext('SweepStuckSagas');
            return new SweepStuckSagas(ds, timeouts, metrics, logger, config.SAGA_STUCK_SWEEP_BATCH);
          },
          inject: [DataSource, SagaMetrics, PinoLogger],
        },
        {
          provide: ReadHorizon,
          // The consumer group is the service name (InboxTransport): the horizon is how far that group has read.
          useFactory: () => {
            const { brokers, security } = kafkaClientOptions(config);
            const admin = createKafka(brokers, `${config.SERVICE_NAME}-read-horizon`, security).admin();
            return new ReadHorizon(admin, config.SERVICE_NAME, TRACKED_TYPES);
          },
        },
        {
          provide: StuckSweepJob,
          useFactory: (sweep: SweepStuckSagas, horizon: ReadHorizon, logger: PinoLogger) =>
            new StuckSweepJob(sweep, horizon, logger, config.SAGA_STUCK_SWEEP_INTERVAL_MS),
          inject: [SweepStuckSagas, ReadHorizon, PinoLogger],
        },
      ],
    };
  }
}
