import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { RecordSagaStep } from '../commands/record-step/record-step.handler';
import { TRACKED_TYPES } from '../domain';
import { SagaMetrics } from '../saga.metrics';

/**
 * Every saga topic of the contracts registry: each event is recorded as a step of its saga, a partition's
 * chunk of events per transaction (the tracker reads every event of every saga: it must cost little per event).
 */
@Controller()
export class SagaEventsConsumer {
  constructor(
    private readonly record: RecordSagaStep,
    private readonly metrics: SagaMetrics,
  ) {}

  @EventPattern([...TRACKED_TYPES], { batch: true })
  async steps(@Payload() events: SagaEvent[], @Ctx() { tx }: InboxContext): Promise<void> {
    for (const outcome of await this.record.executeAll(tx, events))
      if (outcome.recorded) this.metrics.stepRecorded(outcome.step.type, outcome.step.outcome);
  }
}
