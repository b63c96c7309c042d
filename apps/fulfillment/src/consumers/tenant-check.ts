import { SagaEvent } from '@checkout/contracts';
import { NonRetryableError } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { FulfillmentError } from '../shipping/domain';

/**
 * Throws (parks the event on the DLQ) when the event's tenant is unknown to this deployment, its saga id is
 * not its order, or a payload names another tenant than the envelope.
 */
export function requireKnownSaga(
  tenants: TenantRegistry,
  event: SagaEvent,
  orderId: string,
  payloadTenantId?: string,
): void {
  const broken = (code: FulfillmentError['code'], message: string) => new NonRetryableError(code, message);
  if (!tenants.get(event.tenantId))
    throw broken('FULFILLMENT.UNKNOWN_TENANT', `unknown tenant ${event.tenantId}`);
  if (event.sagaId !== orderId)
    throw broken('FULFILLMENT.SAGA_MISMATCH', `sagaId ${event.sagaId} is not orderId ${orderId}`);
  if (payloadTenantId !== undefined && payloadTenantId !== event.tenantId)
    throw broken('FULFILLMENT.TENANT_MISMATCH', `payload tenant ${payloadTenantId} is not ${event.tenantId}`);
}
