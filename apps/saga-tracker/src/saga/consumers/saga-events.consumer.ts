import { HandlerMap } from '@checkout/messaging';
import { TRACKED_TYPES } from '../domain';
import { RecordSagaStep } from '../commands/record-step/record-step.handler';
import { SagaMetrics } from '../saga.metrics';

/**
 * The tracker's handlers: one per saga topic of the contracts registry, each recording the event as a step
 * of its saga in the consumer's inbox transaction (parse and inbox are the runtime's; invalid events go to
 * the DLQ there).
 */
export function sagaTrackerHandlers(record: RecordSagaStep, metrics: SagaMetrics): HandlerMap {
  const handlers: HandlerMap = {};
  for (const type of TRACKED_TYPES) {
    (handlers as Record<string, unknown>)[type] = async (
      event: Parameters<RecordSagaStep['execute']>[1],
      tx: Parameters<RecordSagaStep['execute']>[0],
    ) => {
      const outcome = await record.execute(tx, event);
      if (outcome.recorded) metrics.stepRecorded(outcome.step.type, outcome.step.outcome);
    };
  }
  return handlers;
}
