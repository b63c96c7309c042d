import { DynamicModule, Module } from '@nestjs/common';
import { KafkaOffsetReader } from '@checkout/messaging';
import { kafkaClientOptions } from '@checkout/service-kit';
import { SagaTrackerConfig, stuckTimeoutsOf } from '../config/saga-tracker.config';
import { RecordSagaStepHandler } from './commands/record-step/record-step.handler';
import { SweepStuckSagasHandler } from './commands/sweep-stuck/sweep-stuck.handler';
import { SagaEventsConsumer } from './consumers/saga-events.consumer';
import { SagasController } from './http/sagas.controller';
import { TimelinePageController } from './http/timeline-page.controller';
import { ReadHorizon } from './jobs/read-horizon';
import { StuckSweepJob } from './jobs/stuck-sweep.job';
import { SagaMetrics } from './saga.metrics';
import { HORIZON_OFFSETS, STUCK_TIMEOUTS } from './saga.tokens';

/** The saga timeline: the consumer of every saga topic, the stuck sweep, the API and the timeline page. */
@Module({})
export class SagaModule {
  static register(config: SagaTrackerConfig): DynamicModule {
    const { brokers, security } = kafkaClientOptions(config);
    return {
      module: SagaModule,
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [SagasController, TimelinePageController, SagaEventsConsumer],
      providers: [
        { provide: STUCK_TIMEOUTS, useValue: stuckTimeoutsOf(config) },
        // A client object only: it connects at the first sample of the read horizon.
        {
          provide: HORIZON_OFFSETS,
          useValue: new KafkaOffsetReader(brokers, `${config.SERVICE_NAME}-read-horizon`, security),
        },
        SagaMetrics,
        RecordSagaStepHandler,
        SweepStuckSagasHandler,
        ReadHorizon,
        StuckSweepJob,
      ],
    };
  }
}
