import { DomainError } from '@checkout/contracts';

/** The tracker has recorded no saga with this id for this tenant. */
export class SagaNotFound extends DomainError {
  constructor(sagaId: string) {
    super('SAGA_NOT_FOUND', `no saga ${sagaId} has been recorded`);
  }
}

/** An event type the tracker has no outcome class for: parked (and replayable), never guessed. */
export class UnclassifiedType extends DomainError {
  constructor(type: string) {
    super('SAGA.UNCLASSIFIED_TYPE', `no outcome class for ${type}`);
  }
}
