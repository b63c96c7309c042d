import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SAGA_TOPICS, SagaEvent } from '@checkout/contracts';
import { InboxContext } from '@checkout/messaging';
import { RecordSagaStepHandler } from '../commands/record-step/record-step.handler';

/**
 * Every saga topic of the contracts registry: each event is recorded as a step of its saga, a partition's
 * chunk of events per transaction (the tracker reads every event of every saga: it must cost little per event).
 */
@Controller()
export class SagaEventsConsumer {
  constructor(private readonly record: RecordSagaStepHandler) {}

  @EventPattern([...SAGA_TOPICS], { batch: true })
  async steps(@Payload() events: SagaEvent[], @Ctx() { tx }: InboxContext): Promise<void> {
    await this.record.executeAll(tx, events);
  }
}
