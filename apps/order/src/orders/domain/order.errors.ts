import { DomainError } from '@checkout/contracts';

/** No order with this id for this tenant (another tenant's order included). */
export class OrderNotFound extends DomainError {
  constructor(orderId: string) {
    super('ORDER_NOT_FOUND', `order ${orderId} not found`);
  }
}

/** The order is past the point where the customer may cancel it. */
export class OrderNotCancellable extends DomainError {
  constructor(orderId: string, status: string, paymentState: string | null) {
    super(
      'ORDER_NOT_CANCELLABLE',
      `order ${orderId} is ${status} (payment ${paymentState ?? 'none'}): it can no longer be cancelled`,
      { status, paymentState },
    );
  }
}

/** An apology voucher's code is taken by another voucher of the tenant. */
export class ApologyVoucherCodeTaken extends DomainError {
  constructor(code: string, orderId: string) {
    super(
      'ORDER.VOUCHER_CODE_TAKEN',
      `apology voucher ${code} of order ${orderId}: another voucher has that code`,
    );
  }
}
