import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { OrderCreatedV1, SagaEvent } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { orderCreatedPayload, sagaEvent } from '@checkout/testing';
import { SetStockHandler } from '../src/reservation/commands';

/**
 * Tenant of the specs that call commands directly: not in the services' registry, so the running
 * service's jobs never touch these rows and the other services park (not act on) the events they cause.
 */
export const TEST_TENANT = 'it-inventory';

/** The outbox writer the service itself uses. */
export const outbox = new OutboxWriter('inventory');

/** A SKU no other spec or run uses. */
export const uniqueSku = (name: string): string => `IT-${name}-${randomBytes(4).toString('hex')}`;

/** An order.created payload with these (sku, quantity) lines. */
export function order(lines: [string, number][], overrides: Partial<OrderCreatedV1> = {}): OrderCreatedV1 {
  return orderCreatedPayload({
    lines: lines.map(([sku, quantity]) => ({
      sku,
      quantity,
      unitPrice: 1000,
      discount: 0,
      lineTotal: 1000 * quantity,
    })),
    ...overrides,
  });
}

/** Runs fn in its own transaction. */
export const inTx = <T>(ds: DataSource, fn: (tx: EntityManager) => Promise<T>): Promise<T> =>
  ds.transaction(fn);

/** Creates a SKU with this many available units. */
export async function givenStock(
  ds: DataSource,
  sku: string,
  available: number,
  {
    tenantId = TEST_TENANT,
    allowBackorder = false,
    reservationTtlSeconds,
  }: { tenantId?: string; allowBackorder?: boolean; reservationTtlSeconds?: number } = {},
): Promise<void> {
  await inTx(ds, (tx) =>
    new SetStockHandler(outbox).execute(tx, {
      tenantId,
      sku,
      available,
      allowBackorder,
      reservationTtlSeconds,
    }),
  );
}

/** The counters of a SKU. */
export async function stockOf(ds: DataSource, sku: string, tenantId = TEST_TENANT) {
  const rows = await ds.query(
    `SELECT available, reserved, sold, restocked::int AS restocked FROM stock WHERE tenant_id = $1 AND sku = $2`,
    [tenantId, sku],
  );
  return rows[0] as { available: number; reserved: number; sold: number; restocked: number } | undefined;
}

/** Reservation rows of an order, by SKU. */
export async function reservationsOf(ds: DataSource, orderId: string) {
  return (await ds.query(
    `SELECT sku, qty, status, payment_outcome AS "paymentOutcome", release_reason AS "releaseReason"
       FROM reservation WHERE order_id = $1 ORDER BY sku`,
    [orderId],
  )) as {
    sku: string;
    qty: number;
    status: string;
    paymentOutcome: string | null;
    releaseReason: string | null;
  }[];
}

/** Events the inventory outbox holds for an order, oldest first. */
export async function eventsOf(ds: DataSource, orderId: string) {
  const rows: { type: string; payload: { payload: Record<string, unknown> } }[] = await ds.query(
    `SELECT type, payload FROM outbox WHERE saga_id = $1 ORDER BY sequence`,
    [orderId],
  );
  return rows.map((r) => ({ type: r.type, payload: r.payload.payload }));
}

/** Moves an order's reservations past their TTL, as if the customer had been on the 3DS page too long. */
export async function expire(ds: DataSource, orderId: string): Promise<void> {
  await ds.query(`UPDATE reservation SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [
    orderId,
  ]);
}

/** An order.created envelope as the order service publishes it. */
export function orderCreatedEvent(
  payload: OrderCreatedV1,
  tenantId = TEST_TENANT,
): SagaEvent<'order.created'> {
  return sagaEvent('order.created', tenantId, payload.orderId, payload);
}

/**
 * Two SKUs with `units` each and `count` two-line orders of one unit of both, every other one listing the
 * SKUs in the opposite order (the deadlock-prone shape).
 */
export async function givenCrossedOrders(ds: DataSource, name: string, units: number, count: number) {
  const a = uniqueSku(`${name}-a`);
  const b = uniqueSku(`${name}-b`);
  await givenStock(ds, a, units);
  await givenStock(ds, b, units);
  const orders = Array.from({ length: count }, (_, i) =>
    order(
      i % 2 === 0
        ? [
            [a, 1],
            [b, 1],
          ]
        : [
            [b, 1],
            [a, 1],
          ],
    ),
  );
  return { a, b, orders };
}
