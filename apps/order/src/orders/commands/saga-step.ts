import { EntityManager } from 'typeorm';
import { SagaEvent } from '@checkout/contracts';
import { Logger } from '@checkout/messaging';
import { Moved, OrderRepository } from '../database/order.repository';
import { OrderStatus } from '../domain/order-status';

/**
 * What a saga command gets from the consumer transport (its InboxContext): the transaction of the event's inbox
 * row, and where to queue what may only happen once that transaction has committed (the Redis gate).
 */
export interface SagaStep {
  tx: EntityManager;
  afterCommit(fn: () => Promise<unknown>): void;
}

/** The gate operations the saga needs (OrderStockGate in the service, a fake in specs). */
export interface SagaGate {
  giveBack(tenantId: string, holdId: string | null, why: string): Promise<void>;
  settle(tenantId: string, holdId: string | null): Promise<void>;
}

/** Injection token of the gate the saga commands use (OrderStockGate). */
export const SAGA_GATE = Symbol('SAGA_GATE');

/**
 * The order's conditional move to `to`, caused by event e: null when it did not move (a duplicate, late or foreign
 * event finds the order elsewhere and changes nothing, so nothing ever moves backwards).
 */
export async function moveOrder(
  orders: OrderRepository,
  logger: Logger,
  tx: EntityManager,
  e: SagaEvent,
  to: Exclude<OrderStatus, 'PENDING'>,
): Promise<Moved | null> {
  const moved = await orders.transition(tx, e.tenantId, e.sagaId, to, e.type, e.eventId);
  if (!moved)
    logger.info(
      { orderId: e.sagaId, type: e.type, to },
      'event did not move the order (duplicate, late or foreign)',
    );
  return moved;
}
