import { DomainError } from '@checkout/contracts';

/** A PSP webhook whose signature does not verify: the caller learns nothing but "refused". */
export class WebhookRefused extends DomainError {
  constructor() {
    super('WEBHOOK_UNAUTHENTICATED', 'webhook refused');
  }
}

/** No parked (`refund_failed`) refund with this id for this tenant. */
export class RefundNotParked extends DomainError {
  constructor() {
    super('REFUND_NOT_PARKED', 'no parked refund with this id');
  }
}
