import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SagaEvent } from '@checkout/contracts';
import { IssueVoucherHandler } from '../../../catalog/commands/issue-voucher/issue-voucher.handler';
import { OrderRepository } from '../../database/order.repository';
import { ApologyVoucherCodeTaken } from '../../domain/order.errors';
import { SagaStep } from '../saga-step';

/**
 * IssueApologyVoucher (fulfillment.apology-voucher-issued): the apology email carrying this code is already
 * queued: make the code redeemable, once, by the order's customer (our own record of it wins; fulfillment's
 * when we do not know the order). A code another voucher has is parked (ORDER.VOUCHER_CODE_TAKEN).
 */
@Injectable()
export class IssueApologyVoucherHandler {
  constructor(
    private readonly orders: OrderRepository,
    private readonly issueVoucher: IssueVoucherHandler,
    private readonly logger: PinoLogger,
  ) {}

  async execute(step: SagaStep, e: SagaEvent<'fulfillment.apology-voucher-issued'>): Promise<void> {
    const order = await this.orders.find(step.tx, e.tenantId, e.payload.orderId);
    const outcome = await this.issueVoucher.execute(step.tx, e.tenantId, {
      code: e.payload.code,
      percentOff: e.payload.percentOff,
      maxRedemptions: e.payload.maxRedemptions,
      customerId: order?.customerId ?? e.payload.customerId,
      forOrderId: e.payload.orderId,
    });
    if (outcome === 'code-taken') throw new ApologyVoucherCodeTaken(e.payload.code, e.payload.orderId);
    this.logger.info(
      { orderId: e.payload.orderId, outcome, knownOrder: order !== undefined },
      'apology voucher issued',
    );
  }
}
