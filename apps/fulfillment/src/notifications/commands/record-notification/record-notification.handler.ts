import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER, SERVICE_CONFIG } from '@checkout/service-kit';
import { FulfillmentConfig } from '../../../config/fulfillment.config';
import {
  InventoryUnavailableAfterPaymentV1,
  OrderPaidV1,
  PaymentFailedV1,
  SagaEvent,
} from '@checkout/contracts';
import {
  generateVoucherCode,
  orderConfirmationEmail,
  outOfStockApologyEmail,
  paymentFailedEmail,
} from '../../domain';
import {
  NotificationContent,
  customerOf,
  insertNotification,
  rememberCustomer,
} from '../../database/notification.repository';

/** What RecordNotification did: queued the email, or found the order already had one of this kind. */
export type RecordNotificationOutcome = 'queued' | 'duplicate';

/** Settings of the notification texts: the percentage off of an apology voucher. */
export type NotificationConfig = Pick<FulfillmentConfig, 'APOLOGY_VOUCHER_PERCENT_OFF'>;

/** Injection token of the voucher code generator (generateVoucherCode unless a spec gives a fixed one). */
export const VOUCHER_CODE = Symbol('VOUCHER_CODE');

/**
 * RecordNotification: writes the customer email an event calls for into the notification table, in the
 * consumer's transaction (the table is the emails' outbox; the notifier step sends it later). One per order
 * and kind, so a redelivered event queues nothing. When the customer is not known yet (payment.failed
 * before order.created was seen) the row waits without a recipient until order.created gives it one.
 */
@Injectable()
export class RecordNotificationHandler {
  private readonly voucherCode: () => string;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: NotificationConfig,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Optional() @Inject(VOUCHER_CODE) voucherCode?: () => string,
  ) {
    this.voucherCode = voucherCode ?? generateVoucherCode;
  }

  /**
   * order.created / order.paid: remembers the order's customer and gives it to the order's notifications still
   * without a recipient.
   */
  rememberCustomer(tx: EntityManager, tenantId: string, orderId: string, customerId: string): Promise<void> {
    return rememberCustomer(tx, tenantId, orderId, customerId);
  }

  /** order.paid -> order confirmation. */
  confirmOrder(tx: EntityManager, tenantId: string, order: OrderPaidV1, cause: SagaEvent) {
    const content = orderConfirmationEmail({
      orderId: order.orderId,
      lines: order.lines,
      total: order.total,
      currency: order.currency,
    });
    return this.queue(tx, {
      tenantId,
      orderId: order.orderId,
      kind: 'order_confirmation',
      customerId: order.customerId,
      cause,
      ...content,
    });
  }

  /** payment.failed -> payment failed. */
  async paymentFailed(tx: EntityManager, tenantId: string, failed: PaymentFailedV1, cause: SagaEvent) {
    const content = paymentFailedEmail({ orderId: failed.orderId, reason: failed.reason });
    const customerId = await customerOf(tx, tenantId, failed.orderId);
    return this.queue(tx, {
      tenantId,
      orderId: failed.orderId,
      kind: 'payment_failed',
      customerId,
      cause,
      ...content,
    });
  }

  /**
   * inventory.unavailable-after-payment -> apology with a fresh voucher code, and, in the same transaction,
   * fulfillment.apology-voucher-issued, from which the order service (the owner of vouchers) makes the code
   * redeemable once. A redelivered event queues no second email and issues no second code.
   */
  async apologise(
    tx: EntityManager,
    tenantId: string,
    unavailable: InventoryUnavailableAfterPaymentV1,
    cause: SagaEvent,
  ) {
    const voucherCode = this.voucherCode();
    const percentOff = this.config.APOLOGY_VOUCHER_PERCENT_OFF;
    const content = outOfStockApologyEmail({
      orderId: unavailable.orderId,
      skus: unavailable.shortSkus,
      voucherCode,
      percentOff,
    });
    const customerId = await customerOf(tx, tenantId, unavailable.orderId);
    const notificationId = randomUUID();
    const outcome = await this.queue(tx, {
      id: notificationId,
      tenantId,
      orderId: unavailable.orderId,
      kind: 'out_of_stock_apology',
      customerId,
      cause,
      voucherCode,
      ...content,
    });
    if (outcome === 'queued') {
      await this.outbox.append(tx, {
        type: 'fulfillment.apology-voucher-issued',
        tenantId,
        sagaId: unavailable.orderId,
        cause,
        payload: {
          orderId: unavailable.orderId,
          customerId,
          code: voucherCode,
          percentOff,
          maxRedemptions: 1,
          notificationId,
          issuedAt: new Date().toISOString(),
        },
      });
    }
    return outcome;
  }

  private async queue(
    tx: EntityManager,
    n: Omit<NotificationContent, 'voucherCode'> & {
      id?: string;
      tenantId: string;
      voucherCode?: string;
      cause: SagaEvent;
    },
  ): Promise<RecordNotificationOutcome> {
    const inserted = await insertNotification(tx, {
      id: n.id ?? randomUUID(),
      tenantId: n.tenantId,
      orderId: n.orderId,
      kind: n.kind,
      customerId: n.customerId,
      subject: n.subject,
      body: n.body,
      voucherCode: n.voucherCode ?? null,
      causeEventId: n.cause.eventId,
    });
    return inserted ? 'queued' : 'duplicate';
  }
}
