import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { InboxTransport, OutboxWriter } from '@checkout/messaging';
import { CatalogRepository } from '../src/catalog/database/catalog.repository';
import { IssueVoucherHandler } from '../src/catalog/commands/issue-voucher/issue-voucher.handler';
import { ReturnVoucherHandler } from '../src/catalog/commands/return-voucher/return-voucher.handler';
import { UndoCheckoutHandler } from '../src/orders/commands/undo-checkout/undo-checkout.handler';
import { CancelAfterPaymentFailureHandler } from '../src/orders/commands/cancel-after-payment-failure/cancel-after-payment-failure.handler';
import { IssueApologyVoucherHandler } from '../src/orders/commands/issue-apology-voucher/issue-apology-voucher.handler';
import { MarkAwaitingPaymentHandler } from '../src/orders/commands/mark-awaiting-payment/mark-awaiting-payment.handler';
import { MarkBackorderedHandler } from '../src/orders/commands/mark-backordered/mark-backordered.handler';
import { MarkPaidHandler } from '../src/orders/commands/mark-paid/mark-paid.handler';
import { MarkShippedHandler } from '../src/orders/commands/mark-shipped/mark-shipped.handler';
import { RecordPaymentStateHandler } from '../src/orders/commands/record-payment-state/record-payment-state.handler';
import { RejectOrderHandler } from '../src/orders/commands/reject-order/reject-order.handler';
import { SagaGate } from '../src/orders/commands/saga-step';
import { SagaEventsConsumer } from '../src/orders/consumers/saga-events.consumer';
import { OrderRepository } from '../src/orders/database/order.repository';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const silent = new PinoLogger({ pinoHttp: { level: 'silent' } });

/**
 * The order service's consumer as the app builds it, on the transport as the app configures it (admission of
 * `tenantId` with the ORDER prefix), never connected to Kafka: apply() is the runtime's database path. The stock
 * gate (Redis in the service) records its after-commit calls in `gateCalls`.
 */
export function orderTransport(
  dataSource: DataSource,
  { name, tenantId, gateCalls }: { name: string; tenantId: string; gateCalls: string[] },
): InboxTransport {
  const orders = new OrderRepository();
  const catalog = new CatalogRepository();
  const outbox = new OutboxWriter('order');
  const gate: SagaGate = {
    giveBack: async (_t, hold, why) => void (hold && gateCalls.push(`giveBack:${hold}:${why}`)),
    settle: async (_t, hold) => void (hold && gateCalls.push(`settle:${hold}`)),
  };
  const undo = new UndoCheckoutHandler(new ReturnVoucherHandler(catalog), orders, gate);
  return new InboxTransport({
    name,
    brokers: ['127.0.0.1:1'],
    dataSource,
    logger: quiet,
    admission: {
      tenants: { get: (id: string) => (id === tenantId ? { id } : undefined) },
      codePrefix: 'ORDER',
    },
    sagaLocks: true, // as the service runs it
  }).addConsumer(
    new SagaEventsConsumer(
      new MarkAwaitingPaymentHandler(orders, silent),
      new RejectOrderHandler(orders, undo, silent),
      new MarkPaidHandler(orders, outbox, gate),
      new MarkBackorderedHandler(orders, gate, silent),
      new RecordPaymentStateHandler(orders, silent),
      new CancelAfterPaymentFailureHandler(orders, outbox, undo, silent),
      new MarkShippedHandler(orders, silent),
      new IssueApologyVoucherHandler(orders, new IssueVoucherHandler(catalog), silent),
      undo,
    ),
  );
}
