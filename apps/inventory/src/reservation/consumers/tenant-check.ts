import { SagaEvent } from '@checkout/contracts';
import { NonRetryableError } from '@checkout/messaging';
import { TenantRegistry } from '@checkout/service-kit';
import { InventoryError } from '../domain';

/** Parks an event of a tenant this deployment does not know, or whose saga id is not its order. */
export function requireKnownSaga(tenants: TenantRegistry, event: SagaEvent, orderId: string): void {
  if (!tenants.get(event.tenantId)) {
    throw new NonRetryableError('INVENTORY.UNKNOWN_TENANT', `unknown tenant ${event.tenantId}`);
  }
  if (event.sagaId !== orderId) {
    throw new NonRetryableError(
      'INVENTORY.SAGA_MISMATCH',
      `sagaId ${event.sagaId} is not orderId ${orderId}`,
    );
  }
}

/** Runs a command; a broken inventory rule is not retried but parked on the DLQ with its code. */
export async function parkingRuleErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof InventoryError) throw new NonRetryableError(error.code, error.message);
    throw error;
  }
}
