import { randomUUID } from 'node:crypto';
import { OrderCreatedV1 } from '@checkout/contracts';

/** An order.created payload with sensible defaults, for tests. */
export function orderCreatedPayload(overrides: Partial<OrderCreatedV1> = {}): OrderCreatedV1 {
  const lines = overrides.lines ?? [
    { sku: 'SKU-1', quantity: 1, unitPrice: 50_000, discount: 0, lineTotal: 50_000 },
  ];
  const subtotal = lines.reduce((s, l) => s + l.unitPrice * l.quantity, 0);
  const discount = lines.reduce((s, l) => s + l.discount, 0);
  return {
    orderId: randomUUID(),
    customerId: 'c1',
    currency: 'VND',
    lines,
    subtotal,
    discount,
    total: subtotal - discount,
    voucherCode: null,
    paymentToken: 'tok_success',
    ...overrides,
  };
}
