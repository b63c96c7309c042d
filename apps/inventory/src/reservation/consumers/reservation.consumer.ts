import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SagaEvent } from '@checkout/contracts';
import { InboxContext, InboxPatternExtras } from '@checkout/messaging';
import {
  CancelOrderStockHandler,
  CommitStockHandler,
  ReleaseStockHandler,
  ReserveStockHandler,
  ReturnSoldStockHandler,
} from '../commands';

/** order.created in chunks (group commit) in a consumer group of its own, `inventory-reservations`. */
const RESERVATIONS: InboxPatternExtras = { batch: true, group: 'reservations' };

/**
 * Inventory's reactions to the saga. Every command takes its order's lock first (lockSaga: events of different
 * topics and consumer groups for one order may be applied at the same instant); a broken inventory rule
 * (InventoryError) is parked with its code by the transport.
 */
@Controller()
export class ReservationConsumer {
  constructor(
    private readonly reserve: ReserveStockHandler,
    private readonly release: ReleaseStockHandler,
    private readonly commit: CommitStockHandler,
    private readonly returnSold: ReturnSoldStockHandler,
    private readonly cancel: CancelOrderStockHandler,
  ) {}

  /** ReserveStockHandler: one inventory.reserved or .rejected per order, nothing for an order already cancelled. */
  @EventPattern('order.created', RESERVATIONS)
  async orderCreated(
    @Payload() events: SagaEvent<'order.created'>[],
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.reserve.onOrdersCreated(tx, events);
  }

  /** CancelOrderStockHandler: the cancellation recorded, held lines released, sold lines returned. */
  @EventPattern('order.cancelled')
  async orderCancelled(
    @Payload() event: SagaEvent<'order.cancelled'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.cancel.execute(tx, event);
  }

  /** ReleaseStockHandler (inventory.released, reason payment_failed). */
  @EventPattern('payment.failed')
  async paymentFailed(
    @Payload() event: SagaEvent<'payment.failed'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.release.onPaymentFailed(tx, event);
  }

  /** CommitStockHandler (committed, backordered or unavailable-after-payment). */
  @EventPattern('payment.succeeded')
  async paymentSucceeded(
    @Payload() event: SagaEvent<'payment.succeeded'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.commit.onPaymentSucceeded(tx, event);
  }

  /** ReturnSoldStockHandler: sold units back to available, once. */
  @EventPattern('fulfillment.shipment-failed')
  async shipmentFailed(
    @Payload() event: SagaEvent<'fulfillment.shipment-failed'>,
    @Ctx() { tx }: InboxContext,
  ): Promise<void> {
    await this.returnSold.onShipmentFailed(tx, event);
  }
}
